package leaks

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wdext/wdext/memory/heapsnapshot"
)

// paths is a breadth-first tree of shortest retainer paths over a
// snapshot's strong edges. It is grown first from the global objects
// (Window, or a worker's global scope), over the edges a developer would follow, the way memlab and
// DevTools prefer paths from the page; the nodes that leaves out are
// then reached from V8's root over any strong edge. Neither search
// follows the WebDriver machinery's edges (driver): what only those
// reach is reached last, from them (driverHeld).
type paths struct {
	s      *heapsnapshot.Snapshot
	parent []int32 // node that first reached i; -1 for a source, -2 unreached
	edge   []int32 // which of its parent's edges reached i (see Snapshot.EdgeOf)
	// The shapes of paths, made as needed (see shape): each node's, as
	// an index in shapes, whose steps (numbered by stepID) shapeID finds.
	shapeOf []int32
	shapes  [][]int32
	shapeID map[string]int32
	stepID  map[string]int32
	// rank is the order in which the search reached each node, which
	// grows with the length of its path; -1 unreached.
	rank  []int32
	order []int32 // the nodes reached, in order: the search's queue
	// pageSearch is the rank of the first node the search from V8's root
	// reached: those ranked before were reached from the page.
	pageSearch int32
	// driverSearch is the rank of the first node reached only through
	// the driver's edges.
	driverSearch int32
	d            *driver
}

// retainers searches s from its global objects (globalObjects), then
// from V8's root, leaving out the driver's edges (d), then over them.
func retainers(s *heapsnapshot.Snapshot, globals []int, d *driver) *paths {
	n := s.NodeCount()
	p := &paths{s: s, parent: make([]int32, n), edge: make([]int32, n), rank: make([]int32, n), order: make([]int32, 0, n), d: d}
	for i := range n {
		p.parent[i], p.rank[i] = -2, -1
	}
	var met []driverEdge
	p.bfs(globals, pageEdge, &met)
	p.pageSearch = int32(len(p.order))
	if n > 0 {
		p.bfs([]int{0}, strongEdge, &met)
	}
	p.driverSearch = int32(len(p.order))
	p.driverReach(met)
	p.order = nil
	return p
}

// A driverEdge is an edge of the driver's that a search met on its way
// to a node it had not reached: edge k of node from, to node to.
type driverEdge struct{ from, k, to int32 }

// driverReach reaches what only the driver's edges hold: over the edges
// the searches met (in the order they met them, as a search over them
// from the nodes reached so far would), then on over any strong edge.
func (p *paths) driverReach(met []driverEdge) {
	head := len(p.order)
	for _, e := range met {
		if p.rank[e.to] < 0 {
			p.reach(e.to, e.from, e.k)
		}
	}
	p.search(head, strongEdge, nil)
}

// globalObjects lists the page's and the workers' global objects and
// the page's proxy (see globalName).
func globalObjects(s *heapsnapshot.Snapshot) []int {
	var globals []int
	for i := range s.NodeCount() {
		if isGlobal(s, i) {
			globals = append(globals, i)
		}
	}
	return globals
}

// An edgeFilter tells the edges a search follows: e leaves node from.
type edgeFilter func(s *heapsnapshot.Snapshot, from int, e heapsnapshot.Edge) bool

// isGlobal tells a global object or its proxy (see globalName).
func isGlobal(s *heapsnapshot.Snapshot, i int) bool { return globalName(s, i) != "" }

// globalName is the class of a page's or a worker's global object, or of
// the page's proxy, which V8 names "Window / url", "Window
// [JSGlobalObject] / url", "DedicatedWorkerGlobalScope [JSGlobalObject] /
// url"; "" for any other node. A worker scope is told by V8's suffix
// only: a page's own class may bear the name (a service worker mock).
func globalName(s *heapsnapshot.Snapshot, i int) string {
	if s.Type(i) != "object" {
		return ""
	}
	name := s.Name(i)
	if name == "Window" {
		return name
	}
	for _, g := range globalClasses {
		if rest, ok := strings.CutPrefix(name, g); ok && (strings.HasPrefix(rest, " /") || strings.HasPrefix(rest, " [")) {
			return g
		}
	}
	return ""
}

var globalClasses = []string{"Window", "DedicatedWorkerGlobalScope", "SharedWorkerGlobalScope", "ServiceWorkerGlobalScope"}

// strongEdge tells an edge that keeps its target alive: any but a weak
// one, or a WeakMap's table's edge to a value (see ephemeronValue).
func strongEdge(s *heapsnapshot.Snapshot, from int, e heapsnapshot.Edge) bool {
	return e.Type != "weak" && !ephemeronValue(s, from, e)
}

// ephemeronValue tells the edge from a WeakMap's (or WeakSet's) table to
// the value of one of its entries. V8 gives the value two edges, both
// named "part of key (… @K) -> value (… @V) pair in WeakMap (table
// @T)": one from the table, one from the key. The value lives only as
// long as its key does, so it is the key's edge that holds it: a value
// whose key only the driver holds is the driver's (measured: Vue's
// reactivity keeps a Map of deps per reactive object in a module-level
// WeakMap; after client-side navigations, the components' objects that
// chromedriver's element references keep made 96 such Maps "leak" from
// the page's WeakMap).
func ephemeronValue(s *heapsnapshot.Snapshot, from int, e heapsnapshot.Edge) bool {
	if e.Type != "internal" || !strings.HasSuffix(e.Name, ")") {
		return false
	}
	at := strings.LastIndex(e.Name, " pair in WeakMap (table @")
	if at < 0 {
		return false
	}
	id := e.Name[at+len(" pair in WeakMap (table @") : len(e.Name)-1]
	return id == strconv.FormatUint(uint64(s.ID(from)), 10)
}

// pageEdge tells an edge that a path from the page follows: a strong
// edge that is no synthetic shortcut and no V8 bookkeeping (hidden
// edges, prototypes, hidden classes, code).
func pageEdge(s *heapsnapshot.Snapshot, from int, e heapsnapshot.Edge) bool {
	switch e.Type {
	case "weak", "shortcut", "hidden":
		return false
	}
	if e.Name == "__proto__" || ephemeronValue(s, from, e) {
		return false
	}
	switch s.Type(e.To) {
	case "object shape", "code", "hidden", "synthetic":
		return false
	}
	return true
}

// bfs searches breadth first from sources over the edges follow
// accepts, using p.order as its queue; with met non-nil, it leaves out
// the driver's edges and appends them to *met (see search).
func (p *paths) bfs(sources []int, follow edgeFilter, met *[]driverEdge) {
	head := len(p.order)
	for _, src := range sources {
		if p.rank[src] < 0 {
			p.reach(int32(src), -1, -1)
		}
	}
	p.search(head, follow, met)
}

// reach queues node to, reached from node from (-1 for a source) by its
// edge number k.
func (p *paths) reach(to, from, k int32) {
	p.parent[to], p.edge[to] = from, k
	p.rank[to] = int32(len(p.order))
	p.order = append(p.order, to)
}

// search goes on breadth first from the queue's nodes from head on. With
// met non-nil, the driver's edges to nodes not reached yet are not
// followed but appended to *met, for driverReach.
func (p *paths) search(head int, follow edgeFilter, met *[]driverEdge) {
	for ; head < len(p.order); head++ {
		i := p.order[head]
		k := int32(0)
		for e := range p.s.Edges(int(i)) {
			switch {
			case p.rank[e.To] >= 0:
			case met != nil && p.d.edge(p.s, int(i), e):
				*met = append(*met, driverEdge{i, k, int32(e.To)})
			case follow(p.s, int(i), e):
				p.reach(int32(e.To), i, k)
			}
			k++
		}
	}
}

// fromPage tells a node the search from the page's global objects
// reached.
func (p *paths) fromPage(i int) bool { return p.rank[i] >= 0 && p.rank[i] < p.pageSearch }

// driverHeld tells a node that only the driver's edges hold (driver):
// not the page's, whatever it is.
func (p *paths) driverHeld(i int) bool { return p.rank[i] >= p.driverSearch }

// engineHeld tells a node that no strong path from the engine's root
// reaches: V8 keeps it by edges its snapshot calls weak, and no script
// can reach it. Measured on Chromium 156: the literal boilerplates of
// allocation sites (AllocationSite → transition_info → Object), which V8
// makes as a function's feedback warms up; on a React app's navigation
// under load (12 to 15 on 2 cores), 15 such objects of react-router's
// {pathname, search, hash} literals came back as "objects Object", 5 an
// iteration, in 8 of 43 checks at N = 3.
func (p *paths) engineHeld(i int) bool { return p.rank[i] < 0 }

// representative is the member the search reached first, so one with
// the shortest path; unreached members come last, the lowest heap object
// id among them.
func (p *paths) representative(members []int) int {
	best := members[0]
	for _, m := range members[1:] {
		rm, rb := p.rank[m], p.rank[best]
		switch {
		case rm < 0 && rb < 0:
			if p.s.ID(m) < p.s.ID(best) {
				best = m
			}
		case rm < 0:
		case rb < 0 || rm < rb:
			best = m
		}
	}
	return best
}

// parentEdge is the edge that reached node i, and the node it leaves.
func (p *paths) parentEdge(i int) (heapsnapshot.Edge, int, bool) {
	from := p.parent[i]
	if from < 0 {
		return heapsnapshot.Edge{}, 0, false
	}
	return p.s.EdgeOf(int(from), int(p.edge[i])), int(from), true
}

// nodes is node i's path, source first.
func (p *paths) nodes(i int) []int {
	if p.rank[i] < 0 {
		return nil
	}
	var out []int
	for x := i; x >= 0; x = int(p.parent[x]) {
		out = append(out, x)
	}
	slices.Reverse(out)
	return out
}

// maxPathNodes bounds a formatted path: a longer one (a linked list of
// a million objects) keeps its first and last maxPathNodes/2 nodes.
const maxPathNodes = 64

// path formats node i's path, alternating nodes and edges:
// ["Window", "store (property)", "Array", "[20] (element)", "Foo"]. V8's
// synthetic root is left out; an unreachable node has an empty path. A
// path of more than maxPathNodes nodes has "… (N more)" for its middle.
func (p *paths) path(i int) []string {
	out := []string{}
	ns := p.nodes(i)
	if len(ns) > maxPathNodes {
		ns = slices.Concat(ns[:maxPathNodes/2], []int{-len(ns) + maxPathNodes}, ns[len(ns)-maxPathNodes/2:])
	}
	for k, x := range ns {
		if x < 0 {
			out = append(out, fmt.Sprintf("… (%d more)", -x))
			continue
		}
		if k > 0 {
			e, _, _ := p.parentEdge(x)
			out = append(out, edgeLabel(e))
		}
		if x == 0 && k == 0 {
			continue // the synthetic root
		}
		out = append(out, displayName(p.s, x))
	}
	if len(out) > 0 && ns[0] == 0 && len(ns) > 1 {
		out = out[1:] // the root's edge to the first real node
	}
	return out
}

func edgeLabel(e heapsnapshot.Edge) string {
	switch e.Type {
	case "element", "hidden":
		return "[" + strconv.Itoa(e.Index) + "] (" + e.Type + ")"
	case "context":
		return e.Name + " (variable)"
	}
	if e.Name == "" {
		return "(" + e.Type + ")" // JavaScriptCore's unnamed internal edges
	}
	return e.Name + " (" + e.Type + ")"
}

// displayName names a node in a path: "Window" (or a worker's global
// scope) for a global, an object's
// class without V8's " / url" suffix, a DOM node as domName does, a
// function as "name()", and V8's other nodes by their name in
// parentheses with their type.
func displayName(s *heapsnapshot.Snapshot, i int) string {
	name := s.Name(i)
	switch s.Type(i) {
	case "object":
		if g := globalName(s, i); g != "" {
			return g
		}
		if k := strings.Index(name, " / "); k >= 0 {
			name = name[:k]
		}
		return name
	case "native":
		if strings.HasPrefix(name, "<") || s.Detachedness(i) != 0 {
			return domName(s, i)
		}
		// Blink's C++ templates, "blink::HeapVectorBacking<cppgc::…>":
		// their arguments say nothing a developer needs; nor does the
		// URL of "Window / url", the global's native side.
		if k := strings.Index(name, "<"); k > 0 {
			return name[:k] + "<…>"
		}
		if k := strings.Index(name, " / "); k >= 0 {
			return name[:k]
		}
		return name
	case "closure":
		return name + "()"
	case "string", "concatenated string", "sliced string":
		if len(name) > 40 {
			name = name[:40] + "…"
		}
		return strconv.Quote(name)
	}
	if name == "" {
		return "(" + s.Type(i) + ")"
	}
	return name
}
