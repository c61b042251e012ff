package leaks

import (
	"slices"

	"github.com/wdext/wdext/memory/heapsnapshot"
)

// memlabRules keeps, of the new objects, what memlab find-leaks' default
// leak filter calls a leak (packages/core/src/lib/leak-filters: its
// FilterDetachedDOMElement and FilterUnmountedFiberNode rules), for one
// iteration's snapshots (Input.MemlabRules), where no growth rule can
// tell a leak from a structure made anew:
//
//   - a detached DOM node, unless its immediate dominator holds it by a
//     "stateNode" edge (a React fiber keeps its last host node);
//   - a React fiber (class FiberNode: development builds; production ones
//     minify the name, and memlab finds none there either) whose "return"
//     chain reaches no host root (a fiber whose stateNode is the
//     FiberRootNode), unless a "deletions" array dominates it.
//
// Every other group of new objects, and the collections, go.
func (c *comparison) memlabRules(objects, detached map[string][]int) {
	for name, members := range detached {
		detached[name] = slices.DeleteFunc(members, func(m int) bool { return c.dominatedBy(m, "stateNode") })
	}
	for name, members := range objects {
		if name != "FiberNode" {
			delete(objects, name)
			continue
		}
		objects[name] = slices.DeleteFunc(members, func(m int) bool {
			return hasHostRoot(c.f, m) || c.dominatedByArray(m, "deletions")
		})
	}
}

// dominatedBy tells whether node i's immediate dominator holds it by an
// edge named name.
func (c *comparison) dominatedBy(i int, name string) bool {
	d := c.tree().idom[i]
	if d < 0 {
		return false
	}
	for e := range c.f.Edges(int(d)) {
		if e.To == i && e.Name == name {
			return true
		}
	}
	return false
}

// dominatedByArray tells whether node i's immediate dominator is an array
// that its own dominator holds by an edge named name (memlab's
// isNodeDominatedByDeletionsArray: a fiber's deletions).
func (c *comparison) dominatedByArray(i int, name string) bool {
	d := c.tree().idom[i]
	if d < 0 || c.f.Name(int(d)) != "Array" {
		return false
	}
	return c.dominatedBy(int(d), name)
}

// hasHostRoot tells whether a fiber's "return" chain reaches the host
// root: a fiber whose stateNode is a FiberRootNode.
func hasHostRoot(s *heapsnapshot.Snapshot, i int) bool {
	for hops := 0; i >= 0 && hops < maxFiberWalk; hops++ {
		next := -1
		for e := range s.Edges(i) {
			switch {
			case e.Name == "stateNode" && s.Name(e.To) == "FiberRootNode":
				return true
			case e.Name == "return" && s.Name(e.To) == "FiberNode":
				next = e.To
			}
		}
		i = next
	}
	return false
}

// maxFiberWalk bounds a walk up a fiber tree.
const maxFiberWalk = 1 << 12
