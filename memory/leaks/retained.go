package leaks

import (
	"runtime"
	"sync"

	"github.com/wdext/wdext/memory/heapsnapshot"
)

// retained is a snapshot's dominator tree over the edges the page's
// paths follow (strong ones, not the driver's), and the retained size of
// each node: its self size and those of all the nodes it dominates, the
// memory that would go with it (as DevTools and memlab compute it).
type retained struct {
	idom []int32 // immediate dominator; -1 for the root and unreached nodes
	size []int64
	// kidsAt and kids list the nodes each node immediately dominates
	// (kids[kidsAt[i]:kidsAt[i+1]]), made when first needed.
	kidsAt, kids []int32
}

// dominated lists the nodes that node i immediately dominates.
func (r *retained) dominated(i int32) []int32 {
	if r.kidsAt == nil {
		n := len(r.idom)
		r.kidsAt = make([]int32, n+1)
		for _, d := range r.idom {
			if d >= 0 {
				r.kidsAt[d+1]++
			}
		}
		for k := range n {
			r.kidsAt[k+1] += r.kidsAt[k]
		}
		r.kids = make([]int32, r.kidsAt[n])
		fill := make([]int32, n)
		for k, d := range r.idom {
			if d >= 0 {
				r.kids[r.kidsAt[d]+fill[d]] = int32(k)
				fill[d]++
			}
		}
	}
	return r.kids[r.kidsAt[i]:r.kidsAt[i+1]]
}

// dominators computes it from V8's root (node 0) with the Semi-NCA
// algorithm (Georgiadis, Tarjan and Werneck, "Finding dominators in
// practice"; LLVM's): semidominators as Lengauer and Tarjan find them,
// over a depth-first preorder, with path compression, then each
// immediate dominator as the nearest common ancestor of the node's
// depth-first parent and semidominator. Nearly linear, where an
// iterative algorithm can take a pass per level of a deep heap.
func dominators(s *heapsnapshot.Snapshot, follow edgeFilter) *retained {
	n := s.NodeCount()
	r := &retained{idom: make([]int32, n), size: make([]int64, n)}
	for i := range r.idom {
		r.idom[i] = -1
	}
	if n == 0 {
		return r
	}
	taken := followed(s, follow)
	pre, order, parent := preorder(s, taken) // numbers; nodes by number; DFS parents by number
	preds := predecessors(s, taken, pre)
	m := len(order)
	semi, label, ancestor := make([]int32, m), make([]int32, m), make([]int32, m)
	for v := range m {
		semi[v], label[v], ancestor[v] = int32(v), int32(v), -1
	}
	var stack []int32
	eval := func(v int32) int32 {
		if ancestor[v] < 0 {
			return v
		}
		// Compress the path to the root of v's tree in the forest,
		// nearest the root first, as the recursive version would.
		stack = stack[:0]
		for x := v; ancestor[ancestor[x]] >= 0; x = ancestor[x] {
			stack = append(stack, x)
		}
		for k := len(stack) - 1; k >= 0; k-- {
			x := stack[k]
			a := ancestor[x]
			if semi[label[a]] < semi[label[x]] {
				label[x] = label[a]
			}
			ancestor[x] = ancestor[a]
		}
		return label[v]
	}
	for w := int32(m - 1); w > 0; w-- {
		for _, v := range preds.of(w) {
			if u := eval(v); semi[u] < semi[w] {
				semi[w] = semi[u]
			}
		}
		ancestor[w] = parent[w]
	}
	idom := parent // reused: parent[w] is no longer needed once idom[w] is set
	for w := int32(1); w < int32(m); w++ {
		for idom[w] > semi[w] {
			idom[w] = idom[idom[w]]
		}
	}
	for w := m - 1; w >= 0; w-- {
		node := order[w]
		r.size[node] += s.SelfSize(int(node))
		if w > 0 {
			up := order[idom[w]]
			r.idom[node] = up
			r.size[up] += r.size[node]
		}
	}
	return r
}

// followed tells, by snapshot-wide edge number (EdgeRange), the edges
// follow takes: the filter runs once an edge, on every core, for the
// searches that walk the edges again and again.
func followed(s *heapsnapshot.Snapshot, follow edgeFilter) []bool {
	n := s.NodeCount()
	taken := make([]bool, s.TotalEdges())
	parts := min(runtime.GOMAXPROCS(0), max(1, n/minNodesPerPart))
	var wg sync.WaitGroup
	for k := range parts {
		wg.Go(func() { // owned here: waited for below
			for i := k * n / parts; i < (k+1)*n/parts; i++ {
				lo, hi := s.EdgeRange(i)
				for e := lo; e < hi; e++ {
					taken[e] = follow(s, i, s.EdgeAt(e))
				}
			}
		})
	}
	wg.Wait()
	return taken
}

// minNodesPerPart is the fewest nodes worth a goroutine of followed.
const minNodesPerPart = 1 << 14

// preorder numbers the nodes reached from the root over the taken edges
// in depth-first preorder: pre[i] is node i's number (-1 when
// unreached), order the nodes by it, parent each number's depth-first
// parent (-1 for the root).
func preorder(s *heapsnapshot.Snapshot, taken []bool) (pre, order, parent []int32) {
	n := s.NodeCount()
	pre, order, parent = make([]int32, n), make([]int32, 0, n), make([]int32, 0, n)
	for i := range pre {
		pre[i] = -1
	}
	type frame struct {
		node     int32
		next, hi int // edge numbers
	}
	visit := func(i, from int32) frame {
		pre[i] = int32(len(order))
		order = append(order, i)
		parent = append(parent, from)
		lo, hi := s.EdgeRange(int(i))
		return frame{i, lo, hi}
	}
	stack := []frame{visit(0, -1)}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == top.hi {
			stack = stack[:len(stack)-1]
			continue
		}
		e := top.next
		top.next++
		if to := s.EdgeTo(e); pre[to] < 0 && taken[e] {
			stack = append(stack, visit(int32(to), pre[top.node]))
		}
	}
	return pre, order, parent
}

// predList is the predecessors of each node, by number.
type predList struct {
	first []int32 // first[b]..first[b+1] index into list
	list  []int32
}

func (p predList) of(b int32) []int32 { return p.list[p.first[b]:p.first[b+1]] }

// predecessors lists each numbered node's predecessors over the taken
// edges (num: the nodes' numbers, -1 for those left out), by number.
func predecessors(s *heapsnapshot.Snapshot, taken []bool, num []int32) predList {
	var m int32
	for _, x := range num {
		m = max(m, x+1)
	}
	count := make([]int32, m+1)
	each := func(f func(from, to int32)) {
		for i := range s.NodeCount() {
			if num[i] < 0 {
				continue
			}
			lo, hi := s.EdgeRange(i)
			for e := lo; e < hi; e++ {
				if to := num[s.EdgeTo(e)]; to >= 0 && taken[e] {
					f(num[i], to)
				}
			}
		}
	}
	each(func(_, to int32) { count[to+1]++ })
	for b := int32(1); b <= m; b++ {
		count[b] += count[b-1]
	}
	p := predList{first: count, list: make([]int32, count[m])}
	fill := make([]int32, m)
	each(func(from, to int32) {
		p.list[p.first[to]+fill[to]] = from
		fill[to]++
	})
	return p
}

// of is the retained size of a set of nodes: those of its members that
// no other member dominates.
func (r *retained) of(members []int) int64 {
	in := make(map[int32]bool, len(members))
	for _, m := range members {
		in[int32(m)] = true
	}
	var total int64
	for _, m := range members {
		top := true
		for d, steps := r.idom[m], 0; d >= 0 && steps < maxDominatorWalk; d, steps = r.idom[d], steps+1 {
			if in[d] {
				top = false
				break
			}
		}
		if top {
			total += r.size[m]
		}
	}
	return total
}

// maxDominatorWalk bounds the walk up the dominator tree from a member.
const maxDominatorWalk = 1 << 12
