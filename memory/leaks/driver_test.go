package leaks

import (
	"testing"

	"gotest.tools/v3/assert"
)

// What only the WebDriver machinery holds is no leak: chromedriver's and
// wdext's DevTools handles, its ret_nodes global and cdc_ caches; what
// the page holds too still is, with a path from the page.
func TestDriverHeldIsNoLeak(t *testing.T) {
	b := newPage(0)
	f := newPage(0)
	g := f.g
	handles := g.Node("synthetic", "(Global handles)", 21, 0)
	g.Element(0, "element", 2, handles)
	results := g.Node("object", "Array", 23, 16)
	g.Edge(handles, "internal", "188 / DevTools console", results)
	retNodes := g.Node("object", "Array", 25, 16)
	g.Edge(f.window, "property", "ret_nodes", retNodes)
	doc := g.Node("native", "HTMLDocument", 27, 16)
	g.Edge(f.window, "property", "document", doc)
	atoms := g.Node("closure", "bb", 33, 32)
	g.Edge(f.window, "property", "se_exportedFunctionSymbol", atoms)
	g.Edge(atoms, "internal", "context", g.Node("object", "pb", 35, 24))
	// The global's property store holds its values by slot.
	props := g.Node("array", "(object properties)", 37, 64)
	g.Edge(f.window, "internal", "properties", props)
	cell := g.Node("object", "system / PropertyCell", 39, 16)
	g.Edge(props, "internal", "12", cell)
	g.Edge(cell, "internal", "value", atoms)
	g.Edge(props, "internal", "13", f.store)
	cache := g.Node("object", "Object", 29, 16)
	g.Edge(doc, "property", "$cdc_asdjflasutopfhvcZLmcfl_", cache)
	for k := range 3 {
		// A detached node the client looked up, with its subtree.
		d := g.Node("native", `<li class="row">`, uint32(3001+4*k), 100)
		g.Detach(d, 2)
		g.Element(results, "element", k, d)
		span := g.Node("native", "<span>", uint32(3003+4*k), 100)
		g.Detach(span, 2)
		g.Element(d, "element", 1, span)
		g.Element(retNodes, "element", k, g.Node("object", "Bar", uint32(4001+2*k), 24))
		g.Element(cache, "element", k, g.Node("object", "Baz", uint32(5001+2*k), 24))
	}
	// Held by the driver and the page: the page's, path from the page.
	foo := g.Node("object", "Foo", 6001, 24)
	g.Element(results, "element", 9, foo)
	g.Element(f.store, "element", 0, foo)
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 1})
	assert.DeepEqual(t, names(r), []string{"objects Foo"})
	assert.DeepEqual(t, r.Leaks[0].RetainerPath, []string{"Window", "store (property)", "Array", "[0] (element)", "Foo"})

	// Another global handle (an embedder's) is no driver's.
	f = newPage(0)
	g = f.g
	handles = g.Node("synthetic", "(Global handles)", 21, 0)
	g.Element(0, "element", 2, handles)
	foo = g.Node("object", "Foo", 6001, 24)
	g.Edge(handles, "internal", "12 / gin::ContextHolder", foo)
	r = find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 1})
	assert.DeepEqual(t, names(r), []string{"objects Foo"})
	// A page property of that name off the global is the page's: the
	// Foo it holds is in the new Holder's leak, which retains it.
	f = newPage(0)
	holder := f.g.Node("object", "Holder", 31, 16)
	f.g.Edge(f.window, "property", "holder", holder)
	f.g.Edge(holder, "property", "ret_nodes", f.g.Node("object", "Foo", 6001, 24))
	r = find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 1})
	assert.DeepEqual(t, names(r), []string{"objects Holder"})
	assert.Equal(t, r.Leaks[0].RetainedBytes, int64(16+24))
}

// A WeakMap's value lives as long as its key: when only the driver holds
// the key (an element the client looked up, say), the value is the
// driver's too, though the page holds the WeakMap (Vue's reactivity keeps
// its deps so); when the page holds the key, it is the page's.
func TestWeakMapValueOfDriverHeldKey(t *testing.T) {
	b := newPage(0)
	build2 := func(pageKeeps bool) *page {
		f := newPage(0)
		g := f.g
		handles := g.Node("synthetic", "(Global handles)", 21, 0)
		g.Element(0, "element", 2, handles)
		weakMap := g.Node("object", "WeakMap", 23, 16)
		g.Edge(f.window, "property", "targetMap", weakMap)
		table := g.Node("array", "", 25, 64)
		g.Edge(weakMap, "internal", "table", table)
		for k := range 3 {
			key := g.Node("object", "Component", uint32(3001+4*k), 24)
			value := g.Node("object", "Deps", uint32(3003+4*k), 24)
			g.Edge(handles, "internal", itoa(100+k)+" / DevTools console", key)
			if pageKeeps {
				g.Element(f.store, "element", k, key)
			}
			pair := "part of key (Component @" + itoa(3001+4*k) + ") -> value (Deps @" + itoa(3003+4*k) + ") pair in WeakMap (table @25)"
			g.Edge(table, "weak", itoa(2*k)+" / key", key)
			g.Edge(table, "internal", itoa(2*k+1)+" / "+pair, value)
			g.Edge(key, "internal", itoa(k)+" / "+pair, value)
		}
		return f
	}
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, build2(false).g), Iterations: 3})
	assert.DeepEqual(t, names(r), []string{})
	r = find(t, Input{Baseline: sum(t, b.g), Final: build(t, build2(true).g), Iterations: 3})
	assert.DeepEqual(t, names(r), []string{"objects Component"})
	assert.Equal(t, r.Leaks[0].RetainedBytes, int64(3*(24+24)))
}

// What DevTools' live-metrics script holds is the tool's, wherever its
// functions hang (a global, a prototype, an observer's callback): the
// entries it kept and its WeakRef per node are no leak. So are the
// entries the browser made, as Blink's buffers hold them; the marks a
// page keeps in its own array still are.
func TestSnapshotToolAndBrowserEntriesAreNoLeak(t *testing.T) {
	b := newPage(0)
	f := newPage(0)
	g := f.g
	source := g.Node("string", `window.devToolsReportSoftNavs = true; "use strict";(()=>{})()`, 21, 64)
	script := g.Node("code", "system / Script / ", 23, 32)
	g.Edge(script, "internal", "source", source)
	tool := func(id uint32, name string) int {
		shared := g.Node("code", "system / SharedFunctionInfo / "+name, id+1, 32)
		g.Edge(shared, "internal", "script", script)
		fn := g.Node("closure", name, id, 32)
		g.Edge(fn, "internal", "shared", shared)
		return fn
	}
	getNode := tool(31, "")
	g.Edge(f.window, "property", "getNodeForIndex", getNode)
	system := g.Node("object", "system / Context", 41, 32)
	g.Edge(getNode, "internal", "context", system)
	pt := g.Node("object", "Array", 43, 16)
	g.Edge(system, "context", "pt", pt)
	proto := g.Node("object", "Window (prototype)", 45, 16)
	g.Edge(f.window, "property", "__proto__", proto)
	g.Edge(proto, "property", "addEventListener", tool(51, "addEventListener"))
	observer := g.Node("native", "PerformanceObserver", 61, 32)
	g.Edge(f.window, "property", "observer", observer)
	callback := tool(63, "")
	g.Element(observer, "element", 1, callback)
	seen := g.Node("object", "Array", 71, 16)
	g.Edge(callback, "internal", "context", seen)
	buffer := g.Node("native", "blink::HeapVectorBacking<…>", 73, 64)
	g.Edge(f.window, "internal", "performance", buffer)
	for k := range 3 {
		g.Element(pt, "element", k, g.Node("object", "WeakRef", uint32(3001+2*k), 16))
		entry := g.Node("object", "PerformanceEventTiming", uint32(4001+2*k), 32)
		g.Element(buffer, "element", k, entry)
		g.Element(seen, "element", k, g.Node("object", "PerformanceLongAnimationFrameTiming", uint32(5001+2*k), 32))
		g.Element(f.store, "element", k, g.Node("object", "PerformanceMark", uint32(6001+2*k), 32))
	}
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 3})
	assert.DeepEqual(t, names(r), []string{"objects PerformanceMark"})
}
