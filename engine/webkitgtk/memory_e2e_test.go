package webkitgtk_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/webkitgtk/webkitgtktest"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/memory"
	"github.com/wdext/wdext/memory/debuggermemory"
	"github.com/wdext/wdext/memory/measurement"
	"github.com/wdext/wdext/wire"
)

const mib = 1 << 20

// memorySession opens testdata/memory/top.html in a new WebKitGTK session:
// 10 MiB kept by the page, 20 MiB by a cross-site iframe (#cross), 50 MiB
// by a dedicated worker, and a same-origin iframe (#same).
func memorySession(t *testing.T) (s string, pages *e2e.Pages) {
	env := webkitgtktest.Start(t, memory.Register, debuggermemory.Register)
	pages = e2e.ServePages(t, e2e.Testdata(), nil)
	id, r := newSession(t, env.URL, map[string]any{})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	s = env.URL + "/session/" + id
	do(t, "POST", s+"/url", map[string]any{"url": pages.A + "/memory/top.html?mb=10&cross=" + pages.B + "&crossmb=20&workermb=50"})
	r = do(t, "POST", s+"/execute/async", map[string]any{"script": "window.ready.then(() => arguments[0]())", "args": []any{}})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	return s, pages
}

// Source "engine" works on WebKitGTK through the inspector: one entry for
// the web process's VM, which holds the page and both iframes (the
// cross-site one aggregated under its container), and one for the
// worker's VM; each within its allocations plus a baseline.
func TestMeasureEngineWebKit(t *testing.T) {
	s, pages := memorySession(t)
	r := do(t, "POST", s+"/wdext/memory/gc", map[string]any{})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	var gc wire.GCResult
	assert.NilError(t, json.Unmarshal(r.Value, &gc))
	assert.Equal(t, len(gc.Targets), 2, "%s", r.Value)
	assert.Equal(t, gc.Targets[0].Type, "page")
	assert.Assert(t, gc.Targets[0].UsedAfter >= 30*mib, "%s", r.Value)
	assert.Equal(t, gc.Targets[1].Type, "worker")
	assert.Assert(t, gc.Targets[1].UsedAfter >= 50*mib, "%s", r.Value)
	assert.Assert(t, !strings.Contains(string(r.Value), "usedBefore"), "%s", r.Value)

	for _, body := range []map[string]any{{}, {"source": "engine"}} {
		start := time.Now()
		r = do(t, "POST", s+"/wdext/memory/measure", body)
		assert.Equal(t, r.Status, 200, "%s", r.Value)
		t.Logf("measure %v in %v: %s", body, time.Since(start), r.Value)
		var m wire.MemoryMeasurement
		assert.NilError(t, json.Unmarshal(r.Value, &m))
		assert.NilError(t, measurement.Validate(m))
		var page, worker *wire.MemoryBreakdownEntry
		for i, e := range m.Breakdown {
			switch {
			case slices.ContainsFunc(e.Attribution, func(a wire.MemoryAttribution) bool { return a.Scope == wire.ScopeDedicatedWorker }):
				worker = &m.Breakdown[i]
			case len(e.Attribution) > 0:
				assert.Assert(t, page == nil, "two page entries: %s", r.Value)
				page = &m.Breakdown[i]
			}
		}
		assert.Assert(t, page != nil && worker != nil, "%s", r.Value)
		const slack = 4 * mib
		assert.Assert(t, page.Bytes >= 30*mib && page.Bytes <= 30*mib+slack, "page entry: %d bytes", page.Bytes)
		assert.Assert(t, worker.Bytes >= 50*mib && worker.Bytes <= 50*mib+slack, "worker entry: %d bytes", worker.Bytes)
		assert.DeepEqual(t, page.Types, []string{measurement.TypeJavaScript})
		want := []wire.MemoryAttribution{
			{URL: pages.A + "/memory/top.html?mb=10&cross=" + pages.B + "&crossmb=20&workermb=50", Scope: wire.ScopeWindow},
			{URL: pages.A + "/memory/frame.html?", Scope: wire.ScopeWindow, Container: &wire.MemoryAttributionContainer{ID: "same", Src: "frame.html?"}},
			{URL: "cross-origin-url", Scope: wire.ScopeCrossOriginAggregated, Container: &wire.MemoryAttributionContainer{ID: "cross", Src: pages.B + "/memory/frame.html?mb=20"}},
		}
		for _, a := range want {
			assert.Assert(t, slices.ContainsFunc(page.Attribution, func(b wire.MemoryAttribution) bool {
				return b.URL == a.URL && b.Scope == a.Scope && (a.Container == nil) == (b.Container == nil) &&
					(a.Container == nil || *a.Container == *b.Container)
			}), "no attribution %+v in %s", a, r.Value)
		}
	}
}

// What WebKitGTK cannot serve answers "unsupported operation" naming what
// is missing: no silent zeros.
func TestMemoryUnsupportedWebKit(t *testing.T) {
	s, _ := memorySession(t)
	for _, c := range []struct {
		path string
		body any
		want string
	}{
		{"/wdext/memory/measure", map[string]any{"source": "api"}, "no performance.measureUserAgentSpecificMemory"},
		{"/wdext/memory/allocations", map[string]any{"trackingAllocationSites": true}, "no allocations as they happen"},
		{"/wdext/memory/gc-log", map[string]any{"collect": true}, "without sizes"},
	} {
		r := do(t, "POST", s+c.path, c.body)
		assert.Assert(t, r.Err != nil, "%s answered %s", c.path, r.Value)
		assert.Equal(t, r.Err.Code, wire.UnsupportedOperation, "%s: %v", c.path, r.Err)
		assert.Assert(t, strings.Contains(r.Err.Message, c.want) && strings.Contains(r.Err.Message, "MiniBrowser"), "%s: %s", c.path, r.Err.Message)
		t.Logf("%s: %s", c.path, r.Err.Message)
	}
}

// A census of the page's VM and of the worker's, through WebKit's heap
// snapshots; and live objects between start and stop, by class.
func TestCensusAndLiveObjectsWebKit(t *testing.T) {
	s, _ := memorySession(t)
	r := do(t, "POST", s+"/execute/sync", map[string]any{"script": "class Foo {}; window.foos = Array.from({length: 10000}, () => new Foo());", "args": []any{}})
	assert.Equal(t, r.Status, 200, "%s", r.Value)

	r = do(t, "POST", s+"/wdext/memory/census", map[string]any{})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	var c struct {
		Objects map[string]struct{ Count, Bytes int64 } `json:"objects"`
		Other   map[string]struct{ Count, Bytes int64 } `json:"other"`
	}
	assert.NilError(t, json.Unmarshal(r.Value, &c))
	assert.Equal(t, c.Objects["Foo"].Count, int64(10000), "%s", r.Value)
	assert.Assert(t, c.Objects["ArrayBuffer"].Bytes >= 30*mib, "the page's and the cross-site iframe's buffers: %s", r.Value)

	r = do(t, "POST", s+"/wdext/memory/census", map[string]any{"targets": "all", "breakdown": map[string]any{"by": "objectClass", "then": map[string]any{"by": "count", "count": false}}})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	var all wire.AllCensus
	assert.NilError(t, json.Unmarshal(r.Value, &all))
	assert.Equal(t, len(all.Targets), 2, "%s", r.Value)
	assert.Equal(t, all.Targets[0].Type, "page")
	assert.Equal(t, all.Targets[1].Type, "worker")
	assert.Assert(t, strings.HasSuffix(all.Targets[1].URL, "worker.js?mb=50"), "%s", all.Targets[1].URL)
	wc, _ := json.Marshal(all.Targets[1].Census)
	var worker map[string]struct{ Bytes int64 }
	assert.NilError(t, json.Unmarshal(wc, &worker))
	assert.Assert(t, worker["ArrayBuffer"].Bytes >= 50*mib, "%s", wc)

	r = do(t, "POST", s+"/wdext/memory/live-objects/start", map[string]any{})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	r = do(t, "POST", s+"/wdext/memory/live-objects/start", map[string]any{})
	assert.Equal(t, r.Status, 500, "started twice: %s", r.Value)
	r = do(t, "POST", s+"/execute/sync", map[string]any{"script": "class Bar {}; window.bars = Array.from({length: 500}, () => new Bar()); Array.from({length: 700}, () => new Bar());", "args": []any{}})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	r = do(t, "POST", s+"/wdext/memory/live-objects/stop", map[string]any{})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	var live wire.LiveObjects
	assert.NilError(t, json.Unmarshal(r.Value, &live))
	var bars, foos int64
	for _, g := range live.LiveObjects {
		assert.Assert(t, g.CreatedFrom == nil)
		switch g.Class {
		case "Bar":
			bars += g.Count
		case "Foo":
			foos += g.Count
		}
	}
	assert.Equal(t, bars, int64(500), "only the kept ones: %s", r.Value)
	assert.Equal(t, foos, int64(0), "allocated before start: %s", r.Value)
}

// The commands measure the client's current window: found by its URL
// among the browser's pages, and, where two windows show the same URL,
// by a mark the inspector sets and the driver reads.
func TestCurrentWindowWebKit(t *testing.T) {
	s, pages := memorySession(t)
	first := do(t, "GET", s+"/window", nil)
	var firstHandle string
	assert.NilError(t, json.Unmarshal(first.Value, &firstHandle))
	url := pages.A + "/memory/top.html?mb=1"

	hasFrame := func(id string) bool {
		t.Helper()
		r := do(t, "POST", s+"/wdext/memory/measure", map[string]any{"source": "engine"})
		assert.Equal(t, r.Status, 200, "%s", r.Value)
		return strings.Contains(string(r.Value), `"id":"`+id+`"`)
	}
	r := do(t, "POST", s+"/window/new", map[string]any{"type": "window"})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	var nw struct{ Handle string }
	assert.NilError(t, json.Unmarshal(r.Value, &nw))
	do(t, "POST", s+"/window", map[string]any{"handle": nw.Handle})
	do(t, "POST", s+"/url", map[string]any{"url": url})
	do(t, "POST", s+"/execute/async", map[string]any{"script": `window.ready.then(() => {
		const f = document.createElement("iframe"); f.id = "second"; f.onload = () => arguments[0](); document.body.append(f); })`, "args": []any{}})
	assert.Assert(t, hasFrame("second"), "a window opened after the session's first")
	assert.Assert(t, !hasFrame("cross"))

	// The first window shows the same URL now, without the extra frame.
	do(t, "POST", s+"/window", map[string]any{"handle": firstHandle})
	do(t, "POST", s+"/url", map[string]any{"url": url})
	do(t, "POST", s+"/execute/async", map[string]any{"script": "window.ready.then(() => arguments[0]())", "args": []any{}})
	assert.Assert(t, !hasFrame("second"), "the first window, not the second")
	do(t, "POST", s+"/window", map[string]any{"handle": nw.Handle})
	assert.Assert(t, hasFrame("second"), "the second window again")

	// In a frame of a window whose URL another window shows too, the
	// windows cannot be told apart without leaving the frame.
	do(t, "POST", s+"/frame", map[string]any{"id": 0})
	r = do(t, "POST", s+"/wdext/memory/measure", map[string]any{"source": "engine"})
	assert.Assert(t, r.Err != nil, "%s", r.Value)
	assert.Equal(t, r.Err.Code, wire.UnsupportedOperation)
	assert.ErrorContains(t, r.Err, "switch to the top-level browsing context")
	do(t, "POST", s+"/frame/parent", map[string]any{})
	assert.Assert(t, hasFrame("second"))
}

// A document navigated away from takes its worker along: wdext's
// MiniBrowser runs without the back/forward cache, where the old
// document's worker would stay listed, suspended, and never answer.
func TestMeasureAfterNavigationWebKit(t *testing.T) {
	s, pages := memorySession(t)
	r := do(t, "POST", s+"/wdext/memory/measure", map[string]any{"source": "engine"})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	assert.Assert(t, strings.Contains(string(r.Value), wire.ScopeDedicatedWorker), "%s", r.Value)
	do(t, "POST", s+"/url", map[string]any{"url": pages.A + "/memory/top.html?mb=1"})
	do(t, "POST", s+"/execute/async", map[string]any{"script": "window.ready.then(() => arguments[0]())", "args": []any{}})
	r = do(t, "POST", s+"/wdext/memory/measure", map[string]any{"source": "engine", "timeout": 5000})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	assert.Assert(t, !strings.Contains(string(r.Value), wire.ScopeDedicatedWorker), "%s", r.Value)
}
