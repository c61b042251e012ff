package leaks

import "github.com/wdext/wdext/wire"

// heldByHandlers tells the members of leak k that the page reaches only
// through the handlers of a listener or timer leak: a search from the
// page's global objects over the edges a developer would follow
// (pageEdge, not the driver's), that does not enter that leak's members,
// does not reach them. What a handler's closure holds is the handler's
// even when the closure's scope is also held by the engine's own caches,
// which keep it from being dominated by the handler: measured on
// WebKitGTK 2.50.6 (a Preact app whose addListener made its big array
// with Array.from and a mapping arrow of the same scope), the array came
// back as objects Array beside the listener group, at N = 3, 5, 7 and 10.
// Members the page does not reach are not held this way. owner gives
// each member's leak.
func (c *comparison) heldByHandlers(k int, leaks []wire.Leak, m int, owner map[int32]int) bool {
	if !c.p.fromPage(m) {
		return false
	}
	for j, l := range leaks {
		if j == k || (l.Kind != wire.LeakEventListeners && l.Kind != wire.LeakTimers) || len(c.members[j]) == 0 {
			continue
		}
		if c.pathEnters(m, j, owner) && !c.pageReachWithout(j)[m] {
			return true
		}
	}
	return false
}

// pathEnters tells whether the page search's path to m (paths, which
// follows the edges and starts from the globals pageReachWithout does)
// goes through a member of leak j. When it does not, the page reaches m
// without j's members, and no search is needed.
func (c *comparison) pathEnters(m, j int, owner map[int32]int) bool {
	for i := int32(m); i >= 0; i = c.p.parent[i] {
		if k, ok := owner[i]; ok && k == j {
			return true
		}
	}
	return false
}

// pageReachWithout is what the page's search reaches without entering
// leak j's members, made once per leak.
func (c *comparison) pageReachWithout(j int) []bool {
	if r, ok := c.reachWithout[j]; ok {
		return r
	}
	n := c.f.NodeCount()
	reached := make([]bool, n)
	for _, m := range c.members[j] {
		reached[m] = true // blocked: never queued
	}
	follow := c.p.d.not(pageEdge)
	var queue []int
	for _, g := range c.globals {
		if !reached[g] {
			reached[g] = true
			queue = append(queue, g)
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for e := range c.f.Edges(i) {
			if !reached[e.To] && follow(c.f, i, e) {
				reached[e.To] = true
				queue = append(queue, e.To)
			}
		}
	}
	for _, m := range c.members[j] {
		reached[m] = false
	}
	if c.reachWithout == nil {
		c.reachWithout = map[int][]bool{}
	}
	c.reachWithout[j] = reached
	return reached
}
