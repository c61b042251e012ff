package leaks

import "github.com/wdext/wdext/memory/heapsnapshot"

// retained is a snapshot's dominator tree over the edges the page's
// paths follow (strong ones, not the driver's), and the retained size of
// each node: its self size and those of all the nodes it dominates, the
// memory that would go with it (as DevTools and memlab compute it).
type retained struct {
	idom []int32 // immediate dominator; -1 for the root and unreached nodes
	size []int64
}

// dominators computes it from V8's root (node 0), with Cooper, Harvey
// and Kennedy's iterative algorithm over a reverse postorder.
func dominators(s *heapsnapshot.Snapshot, follow edgeFilter) *retained {
	n := s.NodeCount()
	r := &retained{idom: make([]int32, n), size: make([]int64, n)}
	for i := range r.idom {
		r.idom[i] = -1
	}
	if n == 0 {
		return r
	}
	post, order := postorder(s, follow) // order: nodes in postorder
	preds := predecessors(s, follow, post)
	const undefined = -1
	idom := make([]int32, len(order)) // by postorder number
	for i := range idom {
		idom[i] = undefined
	}
	root := int32(len(order) - 1)
	idom[root] = root
	for changed := true; changed; {
		changed = false
		for b := root - 1; b >= 0; b-- {
			d := int32(undefined)
			for _, p := range preds.of(b) {
				if idom[p] == undefined {
					continue
				}
				if d == undefined {
					d = p
					continue
				}
				for d != p {
					for d < p {
						d = idom[d]
					}
					for p < d {
						p = idom[p]
					}
				}
			}
			if d != undefined && idom[b] != d {
				idom[b], changed = d, true
			}
		}
	}
	for b, node := range order {
		r.size[node] += s.SelfSize(int(node))
		if int32(b) != root && idom[b] != undefined {
			parent := order[idom[b]]
			r.idom[node] = parent
			r.size[parent] += r.size[node]
		}
	}
	return r
}

// postorder numbers the nodes reached from the root in postorder:
// post[i] is node i's number (-1 when unreached), order the nodes by it.
func postorder(s *heapsnapshot.Snapshot, follow edgeFilter) (post []int32, order []int32) {
	n := s.NodeCount()
	post = make([]int32, n)
	for i := range post {
		post[i] = -2 // unseen
	}
	type frame struct {
		node  int32
		edges []int32
		next  int
	}
	children := func(i int32) []int32 {
		var out []int32
		for e := range s.Edges(int(i)) {
			if follow(s, int(i), e) {
				out = append(out, int32(e.To))
			}
		}
		return out
	}
	stack := []frame{{0, children(0), 0}}
	post[0] = -1 // on the stack
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next < len(top.edges) {
			c := top.edges[top.next]
			top.next++
			if post[c] == -2 {
				post[c] = -1
				stack = append(stack, frame{c, children(c), 0})
			}
			continue
		}
		post[top.node] = int32(len(order))
		order = append(order, top.node)
		stack = stack[:len(stack)-1]
	}
	for i := range post {
		if post[i] < 0 {
			post[i] = -1
		}
	}
	return post, order
}

// predList is the predecessors of each node, by postorder number.
type predList struct {
	first []int32 // first[b]..first[b+1] index into list
	list  []int32
}

func (p predList) of(b int32) []int32 { return p.list[p.first[b]:p.first[b+1]] }

func predecessors(s *heapsnapshot.Snapshot, follow edgeFilter, post []int32) predList {
	var m int32
	for _, x := range post {
		m = max(m, x+1)
	}
	count := make([]int32, m+1)
	each := func(f func(from, to int32)) {
		for i := range s.NodeCount() {
			if post[i] < 0 {
				continue
			}
			for e := range s.Edges(i) {
				if post[e.To] >= 0 && follow(s, i, e) {
					f(post[i], post[e.To])
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
