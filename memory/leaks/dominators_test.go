package leaks

import (
	"math/rand/v2"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/memory/heapsnapshot/heapsnapshottest"
)

// Semi-NCA gives the dominator tree and the retained sizes that Cooper,
// Harvey and Kennedy's iterative algorithm (the one wdext used before,
// kept here as the reference) gives, on random graphs with cycles, weak
// edges and unreachable nodes.
func TestDominatorsAgreeWithIterative(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		g := &heapsnapshottest.Graph{}
		n := 2 + rng.IntN(60)
		for k := range n {
			g.Node("object", "N", uint32(1+2*k), int64(1+rng.IntN(100)))
		}
		for range rng.IntN(3 * n) {
			typ := "property"
			if rng.IntN(6) == 0 {
				typ = "weak"
			}
			g.Edge(rng.IntN(n), typ, "e", rng.IntN(n))
		}
		for k := 1; k < n; k += 1 + rng.IntN(4) { // a spine, so that most are reached
			g.Edge(rng.IntN(k), "property", "s", k)
		}
		s := build(t, g)
		got, want := dominators(s, strongEdge), dominatorsCHK(s, strongEdge)
		assert.DeepEqual(t, got.idom, want.idom)
		assert.DeepEqual(t, got.size, want.size)
	}
}

// dominatorsCHK computes it from V8's root (node 0), with Cooper, Harvey
// and Kennedy's iterative algorithm over a reverse postorder.
func dominatorsCHK(s *heapsnapshot.Snapshot, follow edgeFilter) *retained {
	n := s.NodeCount()
	r := &retained{idom: make([]int32, n), size: make([]int64, n)}
	for i := range r.idom {
		r.idom[i] = -1
	}
	if n == 0 {
		return r
	}
	post, order := postorderCHK(s, follow) // order: nodes in postorder
	preds := predecessors(s, followed(s, follow), post)
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

// postorderCHK numbers the nodes reached from the root in postorder:
// post[i] is node i's number (-1 when unreached), order the nodes by it.
func postorderCHK(s *heapsnapshot.Snapshot, follow edgeFilter) (post []int32, order []int32) {
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
