package leaks

import (
	"strings"

	"github.com/wdext/wdext/memory/heapsnapshot"
)

// driver tells the edges through which only the WebDriver machinery
// holds objects, never the page: what a client looked up or a script it
// ran returned stays alive there until the driver lets go, and a
// WebDriver client has no command that does. An object retained only
// through such edges is not the page's leak (see paths.driverHeld).
//
//   - V8 inspector's remote objects: the global handles V8 labels
//     "DevTools console", held for any DevTools client (chromedriver's
//     element references and script results, wdext's own object groups,
//     a DevTools window), an edge from "(Global handles)" named
//     "N / DevTools console".
//   - chromedriver's page globals: the undeclared "ret_nodes" its element
//     lookups assign; "se_exportedFunctionSymbol", where the Selenium
//     atoms it runs (an element's text, whether it is displayed) leave
//     their last copy and its caches; its cached built-ins and element
//     caches, named "cdc_…" (on window) or "$cdc_…" (on document, older
//     versions). A global's values also hang from its property store
//     ("properties (internal)" → "(object properties)" → "N (internal)"
//     → "system / PropertyCell" → "value (internal)"): those edges are
//     the driver's too when only the driver's names hold the value.
//   - what the snapshotting tool leaves in a page (memlab's snapshots have
//     it): every edge to a function of the live-metrics script Chrome's
//     DevTools puts in pages (its source starts
//     "window.devToolsReportSoftNavs = true;"), from a global
//     (getNodeForIndex, its wrapped PerformanceObserver), a prototype
//     (its wrapped addEventListener) or an observer it registered: their
//     closures keep the entries they saw and a WeakRef for every node an
//     entry named; Puppeteer's puppeteer_… bindings (its query handlers).
//   - the browser's own performance entries (event timing, soft
//     navigations, layout shifts, resource timing, …) as Blink holds
//     them: an edge from a Blink object (a buffer, a soft navigation's
//     context) to an entry the browser made. The Performance Timeline
//     bounds each buffer, so they do not grow with the iterations for
//     long; the entries a page makes (marks, measures), and what the
//     page's own objects hold, stay the page's.
type driver struct {
	stores []bool       // by node: the global objects' property stores and their cells (asked of every edge)
	held   map[int]bool // values of the driver's globals that no other global names
	tool   []bool       // by node: functions of DevTools' live-metrics script (edges to them are the tool's)
}

// newDriver finds the driver's globals among the global objects'.
func newDriver(s *heapsnapshot.Snapshot, globals []int) *driver {
	d := &driver{stores: make([]bool, s.NodeCount()), held: map[int]bool{}}
	page := map[int]bool{}
	var stores []int
	for _, g := range globals {
		for e := range s.Edges(g) {
			switch {
			case e.Type == "internal" && e.Name == "properties":
				d.stores[e.To] = true
				stores = append(stores, e.To)
			case e.Type == "property" && driverProperty(s, g, e.Name):
				d.held[e.To] = true
			case e.Type == "property":
				page[e.To] = true
			}
		}
	}
	for i := range page {
		delete(d.held, i)
	}
	d.tool = liveMetrics(s)
	for _, store := range stores {
		for e := range s.Edges(store) {
			if s.Name(e.To) == "system / PropertyCell" {
				d.stores[e.To] = true
			}
		}
	}
	return d
}

// not is follow without the driver's edges.
func (d *driver) not(follow edgeFilter) edgeFilter {
	return func(s *heapsnapshot.Snapshot, from int, e heapsnapshot.Edge) bool {
		return follow(s, from, e) && !d.edge(s, from, e)
	}
}

// edge tells an edge of the driver's, e leaving node from.
func (d *driver) edge(s *heapsnapshot.Snapshot, from int, e heapsnapshot.Edge) bool {
	if d.tool[e.To] {
		return true
	}
	switch e.Type {
	case "property":
		return driverProperty(s, from, e.Name)
	case "internal", "element", "hidden":
		if d.stores[from] && d.held[e.To] {
			return true
		}
		if strings.HasPrefix(s.Name(from), "blink::") && browserEntries[s.Name(e.To)] {
			return true
		}
		return strings.HasSuffix(e.Name, "/ DevTools console") && s.Type(from) == "synthetic" && s.Name(from) == "(Global handles)"
	}
	return false
}

// driverProperty tells a property of node from that chromedriver set.
func driverProperty(s *heapsnapshot.Snapshot, from int, name string) bool {
	if strings.HasPrefix(name, "cdc_") || strings.HasPrefix(name, "$cdc_") {
		return true
	}
	if strings.HasPrefix(name, "puppeteer_") {
		return isGlobal(s, from)
	}
	return driverGlobals[name] && isGlobal(s, from)
}

// driverGlobals are the global variables chromedriver leaves in a page.
var driverGlobals = map[string]bool{"ret_nodes": true, "se_exportedFunctionSymbol": true}

// liveMetricsSource is how the source of DevTools' live-metrics script
// begins.
const liveMetricsSource = "window.devToolsReportSoftNavs = true;"

// liveMetrics finds the functions of DevTools' live-metrics script: the
// closures whose script's source is that script's.
func liveMetrics(s *heapsnapshot.Snapshot) []bool {
	tool := make([]bool, s.NodeCount())
	scripts := map[int]bool{} // by Script node: is it the live-metrics script
	for i := range s.NodeCount() {
		if s.Type(i) != "closure" {
			continue
		}
		script := internal(s, internal(s, i, "shared"), "script")
		if script < 0 {
			continue
		}
		is, seen := scripts[script]
		if !seen {
			source := internal(s, script, "source")
			is = source >= 0 && strings.HasPrefix(s.Name(source), liveMetricsSource)
			scripts[script] = is
		}
		if is {
			tool[i] = true
		}
	}
	return tool
}

// internal is where node i's internal edge name leads, or -1 (for i -1
// too).
func internal(s *heapsnapshot.Snapshot, i int, name string) int {
	if i < 0 {
		return -1
	}
	for e := range s.Edges(i) {
		if e.Type == "internal" && e.Name == name {
			return e.To
		}
	}
	return -1
}

// browserEntries are the performance entries the browser makes and keeps
// in buffers of its own, by class.
var browserEntries = map[string]bool{
	"PerformanceEventTiming": true, "PerformanceSoftNavigation": true, "InteractionContentfulPaint": true,
	"LayoutShift": true, "LargestContentfulPaint": true, "PerformanceLongTaskTiming": true,
	"PerformanceLongAnimationFrameTiming": true, "PerformanceScriptTiming": true, "PerformancePaintTiming": true,
	"PerformanceResourceTiming": true, "PerformanceNavigationTiming": true, "PerformanceElementTiming": true,
	"VisibilityStateEntry": true, "TaskAttributionTiming": true, "BackForwardCacheRestoration": true,
}
