package leaks

import (
	"bytes"
	"encoding/json"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/memory/heapsnapshot/heapsnapshottest"
	"github.com/wdext/wdext/wire"
)

func build(t *testing.T, g *heapsnapshottest.Graph) *heapsnapshot.Snapshot {
	t.Helper()
	var b bytes.Buffer
	_, err := g.WriteTo(&b)
	assert.NilError(t, err)
	s, err := heapsnapshot.Read(&b)
	assert.NilError(t, err)
	return s
}

// page is a heap with V8's root, a Window with a "store" array, a "cache"
// Map whose table holds entries string keys, and a helper "holder" object.
type page struct {
	g                                 *heapsnapshottest.Graph
	root, window, store, cache, table int
	nextID                            uint32
}

func newPage(cacheEntries int) *page {
	g := &heapsnapshottest.Graph{}
	p := &page{g: g, nextID: 1001}
	p.root = g.Node("synthetic", "", 1, 0)
	roots := g.Node("synthetic", "(GC roots)", 3, 0)
	g.Element(p.root, "element", 1, roots)
	p.window = g.Node("object", "Window [JSGlobalObject] / https://a.test", 5, 64)
	g.Element(roots, "element", 1, p.window)
	p.store = g.Node("object", "Array", 7, 16)
	g.Edge(p.window, "property", "store", p.store)
	p.cache = g.Node("object", "Map", 9, 16)
	g.Edge(p.window, "property", "cache", p.cache)
	p.table = g.Node("array", "", 11, int64(32+8*cacheEntries))
	g.Edge(p.cache, "internal", "table", p.table)
	for k := range cacheEntries {
		key := g.Node("string", "key", uint32(13+2*k), 16)
		g.Edge(p.table, "internal", itoa(7+3*k), key) // keys at slots ≡ 1 (mod 3): 4 buckets
	}
	return p
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// node adds a node of a new id, held by nothing yet.
func (p *page) node(typ, name string, size int64) int {
	n := p.g.Node(typ, name, p.nextID, size)
	p.nextID += 2
	return n
}

// add adds n objects of class to the store array, from element index at.
func (p *page) add(class string, n, at int) []int {
	var out []int
	for k := range n {
		o := p.node("object", class, 24)
		p.g.Element(p.store, "element", at+k, o)
		out = append(out, o)
	}
	return out
}

func sum(t *testing.T, g *heapsnapshottest.Graph) *Summary {
	t.Helper()
	return Summarize(build(t, g))
}

func find(t *testing.T, in Input) wire.LeakReport {
	t.Helper()
	r, err := Find(in)
	assert.NilError(t, err)
	return r
}

func names(r wire.LeakReport) []string {
	out := []string{}
	for _, l := range r.Leaks {
		out = append(out, l.Kind+" "+l.Name)
	}
	return out
}

// Only groups that grew by a multiple of the iterations, at least once
// per iteration, are reported; a singleton and a ragged group are not.
func TestGroupsGrowingByMultiplesOfN(t *testing.T) {
	b := newPage(0)
	b.add("Old", 2, 0)
	f := newPage(0)
	f.add("Old", 2, 0) // the same ids: not new
	f.nextID = 2001
	f.add("Foo", 6, 2)
	f.add("Bar", 4, 8)        // 4 is no multiple of 3
	f.add("Baz", 2, 12)       // fewer than 3
	f.add("Singleton", 1, 14) // once
	f.add("system / Context", 3, 15)
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 3})
	assert.DeepEqual(t, names(r), []string{"objects Foo"})
	l := r.Leaks[0]
	assert.Equal(t, l.CountDelta, int64(6))
	assert.Equal(t, l.PerIteration, int64(2))
	assert.Equal(t, l.BytesDelta, int64(6*24))
	assert.Assert(t, l.CreatedFrom == nil, "no traces: %+v", l.CreatedFrom)
	assert.DeepEqual(t, l.RetainerPath, []string{"Window", "store (property)", "Array", "[2] (element)", "Foo"})
	// The store array grew by 16, but for the Foo it holds: not reported.

	r = find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 2})
	assert.DeepEqual(t, names(r), []string{"objects Foo", "objects Bar", "objects Baz"})

	data, err := json.Marshal(r)
	assert.NilError(t, err)
	assert.Assert(t, bytes.Contains(data, []byte(`"createdFrom":null`)), "%s", data)
}

// The retainer path is the shortest over strong edges: a weak edge, a
// shortcut and a prototype link do not count, a longer path loses.
func TestRetainerPathShortestStrong(t *testing.T) {
	b := newPage(0)
	f := newPage(0)
	g := f.g
	foo := g.Node("object", "Foo", 3001, 24)
	g.Edge(f.window, "weak", "direct", foo)
	g.Edge(f.window, "shortcut", "short", foo)
	g.Edge(f.window, "property", "__proto__", foo)
	// Long: Window.a.b.c → Foo.
	a := g.Node("object", "Object", 3003, 16)
	bb := g.Node("object", "Object", 3005, 16)
	g.Edge(f.window, "property", "a", a)
	g.Edge(a, "property", "b", bb)
	g.Edge(bb, "property", "c", foo)
	// Short: Window.store[5] → Foo, also through a closure's context.
	g.Element(f.store, "element", 5, foo)
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 1})
	// Two Objects (32 bytes) come before one Foo (24).
	assert.DeepEqual(t, names(r), []string{"objects Object", "objects Foo"})
	assert.DeepEqual(t, r.Leaks[1].RetainerPath, []string{"Window", "store (property)", "Array", "[5] (element)", "Foo"})
	assert.DeepEqual(t, r.Leaks[0].RetainerPath, []string{"Window", "a (property)", "Object"})

	// Held only by a weak edge from the page and a root's strong one: the
	// path comes from the root.
	f = newPage(0)
	g = f.g
	foo = g.Node("object", "Foo", 3001, 24)
	g.Edge(f.window, "weak", "direct", foo)
	handles := g.Node("synthetic", "(Global handles)", 21, 0)
	g.Element(0, "element", 2, handles)
	g.Element(handles, "element", 7, foo)
	r = find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 1})
	assert.DeepEqual(t, r.Leaks[0].RetainerPath, []string{"(Global handles)", "[7] (element)", "Foo"})

	// Held by nothing strong at all: the engine's (V8 keeps an
	// allocation site's literal boilerplate so), no leak.
	f = newPage(0)
	site := f.g.Node("code", "system / AllocationSite", 3003, 32)
	f.g.Element(0, "element", 3, site)
	foo = f.g.Node("object", "Object", 3001, 24)
	f.g.Edge(site, "weak", "transition_info", foo)
	r = find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 1})
	assert.DeepEqual(t, names(r), []string{})
}

// Detached DOM nodes are their own kind, named after the wrapper's class
// and a selector; attached and old ones are not.
func TestDetachedDOM(t *testing.T) {
	b := newPage(0)
	f := newPage(0)
	g := f.g
	proto := g.Node("object", "HTMLDivElement (prototype) / https://a.test", 51, 40)
	for k := range 4 {
		d := g.Node("native", `<div id="d" class="dialog big">`, uint32(4001+2*k), 130)
		g.Detach(d, 2)
		g.Edge(d, "property", "__proto__", proto)
		g.Element(f.store, "element", k, d)
	}
	attached := g.Node("native", "<span>", 4101, 100)
	g.Detach(attached, 1)
	g.Element(f.store, "element", 4, attached)
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 2})
	assert.DeepEqual(t, names(r), []string{"detached-dom HTMLDivElement div#d.dialog.big"})
	l := r.Leaks[0]
	assert.Equal(t, l.CountDelta, int64(4))
	assert.Equal(t, l.PerIteration, int64(2))
	assert.Equal(t, l.BytesDelta, int64(4*130))
	assert.DeepEqual(t, l.RetainerPath, []string{"Window", "store (property)", "Array", "[0] (element)", "HTMLDivElement div#d.dialog.big"})
}

// A leaked dialog is one group: the detached nodes inside it (its spans,
// their text) are its, and count in its retained size, as memlab reports
// the subtree's root.
func TestDetachedSubtreeIsOneGroup(t *testing.T) {
	b := newPage(0)
	f := newPage(0)
	g := f.g
	id := uint32(4001)
	node := func(name string, size int64) int {
		n := g.Node("native", name, id, size)
		id += 2
		g.Detach(n, 2)
		return n
	}
	for k := range 2 {
		d := node(`<div class="dialog">`, 100)
		g.Element(f.store, "element", k, d)
		for c := range 3 {
			span := node("<span>", 50)
			g.Element(d, "element", c, span)
			g.Element(span, "element", 0, node("Text", 10))
		}
	}
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 2})
	assert.DeepEqual(t, names(r), []string{"detached-dom div.dialog"})
	assert.Equal(t, r.Leaks[0].PerIteration, int64(1))
	assert.Equal(t, r.Leaks[0].RetainedPerIteration, int64(100+3*(50+10)))
}

// A Map (and an array) present in both snapshots that grew is a
// collection leak, named after its holder; an array that holds reported
// objects is not reported again.
func TestCollections(t *testing.T) {
	b := newPage(2)
	f := newPage(8)
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 3})
	assert.DeepEqual(t, names(r), []string{"collection Window.cache (Map)"})
	l := r.Leaks[0]
	assert.Equal(t, l.CountDelta, int64(6))
	assert.Equal(t, l.PerIteration, int64(2))
	assert.Equal(t, l.BytesDelta, int64(6*8))
	assert.DeepEqual(t, l.RetainerPath, []string{"Window", "cache (property)", "Map"})

	// An array of numbers (the elements are heap numbers) grows.
	b = newPage(0)
	f = newPage(0)
	for k := range 4 {
		f.g.Element(f.store, "element", k, f.g.Node("number", "heap number", uint32(5001+2*k), 16))
	}
	r = find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 4})
	assert.DeepEqual(t, names(r), []string{"collection Window.store (Array)"})
}

func TestTableEntries(t *testing.T) {
	for _, c := range []struct {
		slots []int
		isMap bool
		want  int
	}{
		{[]int{7, 10, 13}, true, 3},          // keys only, 4 buckets
		{[]int{7, 8, 10, 11}, true, 2},       // keys and values
		{[]int{8, 11}, true, 2},              // values only (or keys, 2 buckets)
		{[]int{11, 12, 14, 15, 17}, true, 3}, // 8 buckets: keys ≡ 2
		{[]int{5, 7, 9}, false, 3},
	} {
		g := &heapsnapshottest.Graph{}
		g.Node("synthetic", "", 1, 0)
		tab := g.Node("array", "", 3, 0)
		for k, s := range c.slots {
			g.Edge(tab, "internal", itoa(s), g.Node("string", "k", uint32(5+2*k), 16))
		}
		g.Edge(tab, "internal", "map", 0)
		assert.Equal(t, tableEntries(build(t, g), tab, c.isMap), c.want, "%v", c.slots)
	}
}

// Event listeners come from the engine; their creation site is that of
// their handler.
func TestEventListeners(t *testing.T) {
	b := newPage(0)
	f := newPage(0)
	g := f.g
	g.Trace(1, 0, "(root)", "", 0, 0)
	g.Trace(2, 1, "listen", "https://a.test/app.js", 30, 7)
	var after []Listener
	for k := range 6 {
		h := g.Node("closure", "", uint32(6001+2*k), 32)
		g.Allocated(h, 2)
		g.Element(f.store, "element", k, h)
		after = append(after, Listener{"Window", "resize", uint32(6001 + 2*k)})
	}
	after = append(after, Listener{"Document", "click", 0}, Listener{"Window", "load", 0})
	before := []Listener{{"Document", "click", 0}, {"Window", "load", 0}, {"Window", "scroll", 0}}
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 3, ListenersBefore: before, ListenersAfter: after})
	// The store array grew by 6 closures, which are not objects.
	assert.DeepEqual(t, names(r), []string{"collection Window.store (Array)", "event-listeners Window resize"})
	l := r.Leaks[1]
	assert.Equal(t, l.CountDelta, int64(6))
	assert.Equal(t, l.PerIteration, int64(2))
	assert.DeepEqual(t, l.CreatedFrom, &wire.LeakFrame{FunctionName: "listen", URL: "https://a.test/app.js", Line: 30, Column: 7})
}

// What another leak retains is that leak's: a forgotten timer's closure
// holds an object, its array and the array's rows, one leak (memlab
// reports one trace), and a listener's closure holds its big array; the
// listeners stay, the engine's count.
func TestRetainedByAnotherLeak(t *testing.T) {
	b := newPage(0)
	f := newPage(0)
	g := f.g
	node := f.node
	var after []Listener
	for k := range 3 {
		timer := node("closure", "tick", 32)
		g.Element(f.store, "element", k, timer)
		data := node("object", "Data", 16)
		g.Edge(timer, "context", "data", data)
		rows := node("object", "Array", 16)
		g.Edge(data, "property", "rows", rows)
		for r := range 4 {
			g.Element(rows, "element", r, node("object", "Row", 8))
		}
		handlerID := f.nextID
		handler := node("closure", "onCustom", 32)
		g.Element(0, "element", 10+k, handler)
		big := node("object", "Array", 1000)
		g.Edge(handler, "context", "big", big)
		after = append(after, Listener{"Window", "custom", handlerID})
	}
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 3,
		ListenersBefore: []Listener{}, ListenersAfter: after})
	assert.DeepEqual(t, names(r), []string{"objects Data", "event-listeners Window custom"})
	assert.Equal(t, r.Leaks[0].RetainedPerIteration, int64(16+16+4*8))
	assert.Equal(t, r.Leaks[1].RetainedPerIteration, int64(32+1000))
}

// An engine that names no handlers (WebKit's inspector): the new
// functions the window holds by an internal edge, as JavaScriptCore's
// wrapper holds its listeners', are the one grown Window group's, with
// their path and what their closures retain (the big array is the
// listener's, not an objects group). A built-in the global made on first
// use (no scope of its own) is no handler; with two grown groups on the
// window, which is whose is unknown, and neither gets them.
func TestEventListenersUnnamedHandlers(t *testing.T) {
	b := newPage(0)
	check := func(types ...string) wire.LeakReport {
		f := newPage(0)
		g := f.g
		node := f.node
		var after []Listener
		for _, typ := range types {
			handler := node("closure", "Function", 32)
			g.Edge(f.window, "internal", "", handler)
			scope := node("object", "JSLexicalEnvironment", 24)
			g.Edge(handler, "internal", "context", scope)
			big := node("object", "Array", 1000)
			g.Edge(scope, "context", "big", big)
			after = append(after, Listener{"Window", typ, 0})
		}
		g.Edge(f.window, "internal", "", node("closure", "Function", 32)) // a built-in, made on first use
		return find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 3,
			ListenersBefore: []Listener{}, ListenersAfter: after})
	}
	r := check("custom", "custom", "custom")
	assert.DeepEqual(t, names(r), []string{"event-listeners Window custom"})
	assert.Equal(t, r.Leaks[0].RetainedPerIteration, int64(32+24+1000))
	assert.DeepEqual(t, r.Leaks[0].RetainerPath, []string{"Window", "(internal)", "Function()"})
	r = check("custom", "custom", "custom", "other", "other", "other")
	for _, l := range r.Leaks {
		if l.Kind == wire.LeakEventListeners {
			assert.DeepEqual(t, l.RetainerPath, []string{})
		}
	}
}

// What a handler's closure holds is the listener's even when an engine
// cache holds the closure's scope too (JavaScriptCore keeps a function
// its executable made, here the mapping arrow of Array.from in the same
// scope), so that the handler does not dominate it: the page reaches the
// big array only through the handler.
func TestHeldByHandlers(t *testing.T) {
	b := newPage(0)
	f := newPage(0)
	g := f.g
	node := f.node
	var after []Listener
	for k := range 3 {
		handler := node("closure", "Function", 32)
		g.Edge(f.window, "internal", "", handler)
		scope := node("object", "system / Context", 24)
		g.Edge(handler, "internal", "context", scope)
		big := node("object", "Array", 1000)
		g.Edge(scope, "context", "big", big)
		exe := node("code", "FunctionExecutable", 64) // the engine's, from its roots
		g.Element(f.root, "element", 10+k, exe)
		arrow := node("closure", "Function", 32)
		g.Edge(exe, "internal", "singleton", arrow)
		g.Edge(arrow, "internal", "context", scope)
		after = append(after, Listener{"Window", "custom", 0})
	}
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 3,
		ListenersBefore: []Listener{}, ListenersAfter: after})
	assert.DeepEqual(t, names(r), []string{"event-listeners Window custom"})
}

// createdFrom is the frame most members share.
func TestCreatedFromMajority(t *testing.T) {
	b := newPage(0)
	f := newPage(0)
	g := f.g
	g.Trace(1, 0, "(root)", "", 0, 0)
	g.Trace(2, 1, "main", "app.js", 1, 1)
	g.Trace(3, 2, "makeFoos", "app.js", 12, 5)
	g.Trace(4, 2, "other", "app.js", 40, 1)
	foos := f.add("Foo", 4, 0)
	g.Allocated(foos[0], 3)
	g.Allocated(foos[1], 4)
	g.Allocated(foos[2], 3)
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 2})
	assert.DeepEqual(t, r.Leaks[0].CreatedFrom, &wire.LeakFrame{FunctionName: "makeFoos", URL: "app.js", Line: 12, Column: 5})
}

// createdFrom is the page's function: V8's "(V8 API)" frame (a wrapper
// Blink made for the script below it) and the driver's scripts, which
// have no URL, are not; a stack with no page frame gives none.
func TestCreatedFromPageScript(t *testing.T) {
	b := newPage(0)
	f := newPage(0)
	g := f.g
	g.Trace(1, 0, "(root)", "", 0, 0)
	g.Trace(2, 1, "", "", 401, 43) // chromedriver's executeScript
	g.Trace(3, 2, "onClick", "https://a.test/app.js", 12, 5)
	g.Trace(4, 3, "(V8 API)", "", 0, 0)
	g.Trace(5, 1, "(V8 API)", "", 0, 0)
	foos := f.add("Foo", 4, 0)
	for _, n := range foos[:3] {
		g.Allocated(n, 4)
	}
	bars := f.add("Bar", 2, 0)
	for _, n := range bars {
		g.Allocated(n, 5)
	}
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 2})
	byName := map[string]*wire.LeakFrame{}
	for _, l := range r.Leaks {
		byName[l.Name] = l.CreatedFrom
	}
	assert.DeepEqual(t, byName["Foo"], &wire.LeakFrame{FunctionName: "onClick", URL: "https://a.test/app.js", Line: 12, Column: 5})
	assert.Assert(t, byName["Bar"] == nil, "%+v", byName["Bar"])
}

// With memlab's target snapshot, only objects that already existed in
// the target count.
func TestThreeSnapshots(t *testing.T) {
	b := newPage(0)
	tg := newPage(0)
	tg.nextID = 2001
	tg.add("Foo", 3, 0)
	f := newPage(0)
	f.nextID = 2001
	f.add("Foo", 3, 0) // the target's, still alive
	f.add("Bar", 3, 3) // made after the target
	r := find(t, Input{Baseline: sum(t, b.g), Target: sum(t, tg.g), Final: build(t, f.g), Iterations: 1})
	assert.DeepEqual(t, names(r), []string{"objects Foo"})
}

func TestErrors(t *testing.T) {
	s := build(t, newPage(0).g)
	_, err := Find(Input{Baseline: Summarize(s), Final: s})
	assert.ErrorContains(t, err, "iterations")
	_, err = Find(Input{Baseline: Summarize(s)})
	assert.ErrorContains(t, err, "final")
	r := find(t, Input{Baseline: Summarize(s), Final: s, Iterations: 7})
	assert.DeepEqual(t, r.Leaks, []wire.Leak{})
}

func TestSelector(t *testing.T) {
	for in, want := range map[string]string{
		`<div class="dialog">`:       "div.dialog",
		`<div id="x" class="a  b">`:  "div#x.a.b",
		`<span>`:                     "span",
		`<input type="text" id="q">`: "input#q",
		"Text":                       "",
	} {
		assert.Equal(t, selector(in), want, in)
	}
}

// A very long path keeps its ends.
func TestLongPath(t *testing.T) {
	b := newPage(0)
	f := newPage(0)
	g := f.g
	prev, edge := f.window, "first"
	for k := range 100 {
		o := g.Node("object", "Link", uint32(7001+2*k), 16)
		g.Edge(prev, "property", edge, o)
		prev, edge = o, "next"
	}
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 100})
	assert.DeepEqual(t, names(r), []string{"objects Link"})
	r = find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 1})
	path := r.Leaks[0].RetainerPath
	assert.DeepEqual(t, path, []string{"Window", "first (property)", "Link"}) // the representative is the first Link

	// The last link's path, formatted.
	s := build(t, f.g)
	p := retainers(s, globalObjects(s), newDriver(s, globalObjects(s)))
	last := s.NodeCount() - 1
	got := p.path(last)
	// 32 nodes and their 31 edges, the gap, 32 edges and their nodes.
	assert.Equal(t, len(got), 2*maxPathNodes, "%q", got)
	assert.Equal(t, got[0], "Window")
	assert.Equal(t, got[maxPathNodes-1], "… (37 more)") // 101 nodes, 64 shown
	assert.DeepEqual(t, got[len(got)-3:], []string{"Link", "next (property)", "Link"})
}

// Summaries find ids in snapshots whose ids are not in order.
func TestSummaryUnsortedIDs(t *testing.T) {
	var g heapsnapshottest.Graph
	g.Node("synthetic", "", 1, 0)
	for _, id := range []uint32{91, 7, 55, 3} {
		g.Node("object", "X", id, 8)
	}
	m := Summarize(build(t, &g))
	for _, id := range []uint32{1, 91, 7, 55, 3} {
		assert.Assert(t, m.Has(id), id)
	}
	assert.Assert(t, !m.Has(5) && !m.Has(100))
	assert.Equal(t, m.bytes, int64(32))
}

// A worker's heap: paths start at its global scope. A page's own class
// that bears a worker scope's name is only a class.
func TestGlobalScopes(t *testing.T) {
	worker := func(things int) *heapsnapshottest.Graph {
		g := &heapsnapshottest.Graph{}
		root := g.Node("synthetic", "", 1, 0)
		roots := g.Node("synthetic", "(GC roots)", 3, 0)
		g.Element(root, "element", 1, roots)
		global := g.Node("object", "DedicatedWorkerGlobalScope [JSGlobalObject] / https://a.test/w.js", 5, 64)
		g.Element(roots, "element", 1, global)
		kept := g.Node("object", "Array", 7, 16)
		g.Edge(global, "property", "kept", kept)
		for k := range things {
			g.Element(kept, "element", k, g.Node("object", "WorkerThing", uint32(1001+2*k), 24))
		}
		return g
	}
	r := find(t, Input{Baseline: sum(t, worker(0)), Final: build(t, worker(3)), Iterations: 3})
	assert.DeepEqual(t, names(r), []string{"objects WorkerThing"})
	assert.DeepEqual(t, r.Leaks[0].RetainerPath, []string{"DedicatedWorkerGlobalScope", "kept (property)", "Array", "[0] (element)", "WorkerThing"})

	b, f := newPage(0), newPage(0)
	f.add("ServiceWorkerGlobalScope", 3, 0) // a mock's instances
	r = find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 3})
	assert.DeepEqual(t, names(r), []string{"objects ServiceWorkerGlobalScope"})
	assert.DeepEqual(t, r.Leaks[0].RetainerPath, []string{"Window", "store (property)", "Array", "[0] (element)", "ServiceWorkerGlobalScope"})
}

// Stacks that V8 replaced (an object moved after it had a heap object
// id keeps the stack of what was allocated at its new address before:
// see createdFrom) share no frame: no creation site rather than a
// framework's function or another part of the page.
func TestCreatedFromScatteredStacks(t *testing.T) {
	b := newPage(0)
	f := newPage(0)
	g := f.g
	g.Trace(1, 0, "(root)", "", 0, 0)
	g.Trace(2, 1, "oi", "https://a.test/react-dom.js", 8, 23689)
	g.Trace(3, 1, "", "https://a.test/app.js", 9, 51371)
	g.Trace(4, 1, "(V8 API)", "", 0, 0)
	g.Trace(5, 1, "", "", 401, 43) // chromedriver's atom
	foos := f.add("Foo", 4, 0)
	for k, tr := range []uint32{2, 3, 4, 5} {
		g.Allocated(foos[k], tr)
	}
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 2})
	assert.Assert(t, r.Leaks[0].CreatedFrom == nil, "%+v", r.Leaks[0].CreatedFrom)
}

// When the members' own stacks are lost, the page frame that made most
// of the new bytes they dominate names them: a listener's handler shows
// "(V8 API)" after the GC moved it, the 1.6 MB array its closure holds
// (V8's large-object space, never moved) still shows addListener.
func TestCreatedFromDominatedBytes(t *testing.T) {
	b := newPage(0)
	f := newPage(0)
	g := f.g
	g.Trace(1, 0, "(root)", "", 0, 0)
	g.Trace(2, 1, "(V8 API)", "", 0, 0)
	g.Trace(3, 1, "addListener", "https://a.test/app.js", 15, 21)
	g.Trace(4, 1, "render", "https://a.test/framework.js", 1, 4498)
	var after []Listener
	id := uint32(6001)
	for k := range 3 {
		h := g.Node("closure", "onCustom", id, 32)
		g.Allocated(h, 2)
		g.Element(0, "element", 10+k, h)
		ctx := g.Node("object", "system / Context", id+2, 24)
		g.Allocated(ctx, 4) // a stale stack, a few bytes
		g.Edge(h, "context", "context", ctx)
		big := g.Node("array", "", id+4, 1600008)
		g.Allocated(big, 3)
		g.Edge(ctx, "context", "big", big)
		after = append(after, Listener{"Window", "custom-click", id})
		id += 6
	}
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 3,
		ListenersBefore: []Listener{}, ListenersAfter: after})
	l := r.Leaks[len(r.Leaks)-1]
	assert.Equal(t, l.Name, "Window custom-click")
	assert.DeepEqual(t, l.CreatedFrom, &wire.LeakFrame{FunctionName: "addListener", URL: "https://a.test/app.js", Line: 15, Column: 21})
}
