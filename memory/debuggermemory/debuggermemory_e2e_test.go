package debuggermemory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/target"
	"github.com/tebeka/selenium"
	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/engine/chromium/cdp"
	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/memory/debuggermemory"
	"github.com/wdext/wdext/webdriver/wdclient"
	"github.com/wdext/wdext/wire"
)

type counts struct {
	Count int64 `json:"count"`
	Bytes int64 `json:"bytes"`
}

// env is one wdext with the extension (and forcesample, to check that the
// two share the browser's tracing) in front of one browser session.
type env struct {
	*chromiumtest.Env
	pages *e2e.Pages
	wd    selenium.WebDriver
	c     *wdclient.Client
}

func start(t *testing.T) *env {
	t.Helper()
	e := chromiumtest.Start(t, debuggermemory.Register, forcesample.Register)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	wd := e2e.Session(t, e.URL, chromiumtest.Capabilities())
	c, err := wdclient.For(wd)
	assert.NilError(t, err)
	return &env{Env: e, pages: pages, wd: wd, c: c}
}

func (e *env) open(t *testing.T, page string) {
	t.Helper()
	assert.NilError(t, e.wd.Get(e.pages.A+"/debuggermemory/"+page))
}

func (e *env) run(t *testing.T, script string) any {
	t.Helper()
	v, err := e.wd.ExecuteScript(script, nil)
	assert.NilError(t, err, script)
	return v
}

func wdError(t *testing.T, err error) *wire.Error {
	t.Helper()
	we, ok := err.(*wire.Error)
	assert.Assert(t, ok, "want a WebDriver error, got %T %v", err, err)
	return we
}

// 10,000 instances of class Foo are exactly 10,000 "Foo" objects in an
// objectClass census: V8 names objects after their constructor, and
// neither Foo.prototype nor the class itself (a closure, so "Function") is
// named Foo, so V8 adds none.
func TestCensusCountsClassInstances(t *testing.T) {
	e := start(t)
	e.open(t, "foo.html")
	assert.Equal(t, e.run(t, `return makeFoos(10000)`), float64(10000))

	var byClass map[string]counts
	assert.NilError(t, wdclient.TakeCensus(e.wd, map[string]any{"by": "objectClass"}, &byClass))
	assert.Equal(t, byClass["Foo"].Count, int64(10000))
	// Each is a header plus one in-object property: at least 12 bytes.
	assert.Assert(t, byClass["Foo"].Bytes >= 12*10000, "%+v", byClass["Foo"])
	assert.Assert(t, byClass["other"].Count > 0)

	// The default breakdown: coarse types, objects by class, other by type.
	var def struct {
		Objects map[string]counts `json:"objects"`
		Scripts counts            `json:"scripts"`
		Strings counts            `json:"strings"`
		Other   map[string]counts `json:"other"`
	}
	assert.NilError(t, wdclient.TakeCensus(e.wd, nil, &def))
	assert.Equal(t, def.Objects["Foo"].Count, int64(10000))
	assert.Assert(t, def.Scripts.Count > 0 && def.Strings.Count > 0)
	assert.Assert(t, def.Other["array"].Count > 0, "%v", def.Other)
	_, hasObject := def.Other["object"]
	assert.Assert(t, !hasObject, "objects are not other: %v", def.Other)

	// Counting only, and a list of breakdowns.
	var list []json.RawMessage
	assert.NilError(t, wdclient.TakeCensus(e.wd, []any{map[string]any{"by": "count", "bytes": false}, map[string]any{"by": "internalType"}}, &list))
	assert.Equal(t, len(list), 2)
	assert.Assert(t, !strings.Contains(string(list[0]), "bytes") && strings.Contains(string(list[0]), `"count"`), string(list[0]))
	assert.Assert(t, strings.Contains(string(list[1]), `"closure"`), string(list[1]))
}

// Bad parameters are invalid argument, naming the bad part of the
// breakdown; an unknown session is invalid session id.
func TestCensusErrors(t *testing.T) {
	e := start(t)
	e.open(t, "foo.html")
	ctx := context.Background()
	id := e.wd.SessionID()
	for _, tc := range []struct {
		body any
		want string
	}{
		{map[string]any{"breakdown": map[string]any{"by": "objectClass", "then": map[string]any{"by": "bogus"}}}, "breakdown.then.by"},
		{map[string]any{"breakdown": []any{map[string]any{"by": "count"}, map[string]any{"by": "count", "byte": true}}}, "breakdown[1].byte"},
		{map[string]any{"breakdown": map[string]any{"by": "count", "count": "yes"}}, "breakdown.count"},
		{map[string]any{"breakdown": nil}, "breakdown"},
		{map[string]any{"targets": "workers"}, "targets"},
		{map[string]any{"breakdwon": map[string]any{"by": "count"}}, `unknown parameter "breakdwon"`},
		{"not an object", "JSON object"},
	} {
		err := e.c.Do(ctx, http.MethodPost, "/session/"+id+"/wdext/memory/census", tc.body, nil)
		we := wdError(t, err)
		assert.Equal(t, we.Code, wire.InvalidArgument, "%v", tc.body)
		assert.Assert(t, strings.Contains(we.Message, tc.want), "%v: %s", tc.body, we.Message)
	}
	for _, p := range []string{"census", "allocations", "allocations/drain", "gc-log", "live-objects/start", "live-objects/stop"} {
		err := e.c.Do(ctx, http.MethodPost, "/session/no-such-session/wdext/memory/"+p, struct{}{}, nil)
		assert.Equal(t, wdError(t, err).Code, wire.InvalidSessionID, p)
	}
	err := e.c.Do(ctx, http.MethodGet, "/session/no-such-session/wdext/memory/gc-log", nil, nil)
	assert.Equal(t, wdError(t, err).Code, wire.InvalidSessionID)
}

// With "targets": "all", the page's out-of-process iframe and its
// dedicated workers get their own census; a same-site iframe is part of
// the page's heap.
func TestCensusAllTargets(t *testing.T) {
	e := start(t)
	assert.NilError(t, e.wd.Get(e.pages.A+"/debuggermemory/top.html?worker&cross="+e.pages.B))
	_, err := e.wd.ExecuteScriptAsync(`window.ready.then(arguments[0])`, nil)
	assert.NilError(t, err)

	var all struct {
		Targets []struct {
			Type, URL string
			Census    map[string]counts
		}
	}
	assert.NilError(t, e.c.TakeCensus(context.Background(), e.wd.SessionID(), map[string]any{"by": "objectClass"}, "all", &all))
	byType := map[string]map[string]counts{}
	for _, tc := range all.Targets {
		byType[tc.Type] = tc.Census
	}
	assert.Equal(t, len(all.Targets), 3, "%+v", all.Targets)
	assert.Equal(t, byType["page"]["InFrame"].Count, int64(300), "the same-site iframe")
	assert.Equal(t, byType["iframe"]["InFrame"].Count, int64(300), "the cross-site iframe")
	assert.Equal(t, byType["worker"]["InWorker"].Count, int64(200))
	assert.Equal(t, byType["page"]["InWorker"].Count, int64(0))
}

// The allocation log names the function that allocated, with the sizes V8
// measured; it keeps the newest maxAllocationsLogLength entries.
func TestAllocationLog(t *testing.T) {
	e := start(t)
	e.open(t, "foo.html")

	_, err := wdclient.DrainAllocations(e.wd)
	assert.Equal(t, wdError(t, err).Code, wire.UnsupportedOperation, "draining while not tracking")
	bad := 1.5
	_, err = wdclient.SetAllocations(e.wd, wire.AllocationArgs{AllocationSamplingProbability: &bad})
	assert.Equal(t, wdError(t, err).Code, wire.InvalidArgument)
	err = e.c.Do(context.Background(), http.MethodPost, "/session/"+e.wd.SessionID()+"/wdext/memory/allocations", map[string]any{"tracking": true}, nil)
	assert.Equal(t, wdError(t, err).Code, wire.InvalidArgument, "a misspelt option")

	on := true
	set, err := wdclient.SetAllocations(e.wd, wire.AllocationArgs{TrackingAllocationSites: &on})
	assert.NilError(t, err)
	assert.DeepEqual(t, set, wire.AllocationSettings{
		TrackingAllocationSites: true, AllocationSamplingProbability: 1, MaxAllocationsLogLength: 5000, SamplingInterval: 1,
	})
	e.run(t, `makeThings(1000)`)
	log, err := wdclient.DrainAllocations(e.wd)
	assert.NilError(t, err)
	assert.Assert(t, !log.Overflowed)
	n := 0
	for _, entry := range log.Log {
		if entry.Frame != nil && entry.Frame.FunctionDisplayName == "makeThings" {
			n++
			assert.Assert(t, strings.HasSuffix(entry.Frame.Source, "/debuggermemory/things.js"), entry.Frame.Source)
			assert.Equal(t, entry.Frame.Line, 13) // where makeThings starts
			assert.Assert(t, entry.Size != nil && *entry.Size > 0 && *entry.Size == entry.SampledBytes, "%+v", entry)
			assert.Assert(t, entry.Timestamp == nil && entry.Class == nil && entry.InNursery == nil)
		}
	}
	// Probability 1 logs every allocation: the 1,000 objects, and the
	// array's backing stores as it grows.
	assert.Assert(t, n >= 1000, "%d entries from makeThings of %d", n, len(log.Log))

	// Drained: the next drain has only what came since.
	log, err = wdclient.DrainAllocations(e.wd)
	assert.NilError(t, err)
	for _, entry := range log.Log {
		assert.Assert(t, entry.Frame == nil || entry.Frame.FunctionDisplayName != "makeThings", "%+v", entry.Frame)
	}

	// Entries are in allocation order.
	e.run(t, `makeThings(500); makeFoos(3)`)
	log, err = wdclient.DrainAllocations(e.wd)
	assert.NilError(t, err)
	lastThing, firstFoo, foos := -1, -1, 0
	for i, entry := range log.Log {
		switch {
		case entry.Frame == nil:
		case entry.Frame.FunctionDisplayName == "makeThings":
			lastThing = i
		case entry.Frame.FunctionDisplayName == "makeFoos":
			foos++
			if firstFoo < 0 {
				firstFoo = i
			}
		}
	}
	assert.Assert(t, foos >= 3 && lastThing >= 0 && lastThing < firstFoo, "makeThings up to %d, makeFoos from %d", lastThing, firstFoo)

	// A short log keeps maxAllocationsLogLength entries (the newest: see
	// TestLogKeepsNewest) and says it overflowed.
	ten := 10.0
	_, err = wdclient.SetAllocations(e.wd, wire.AllocationArgs{MaxAllocationsLogLength: &ten})
	assert.NilError(t, err)
	e.run(t, `makeThings(500)`)
	log, err = wdclient.DrainAllocations(e.wd)
	assert.NilError(t, err)
	assert.Assert(t, log.Overflowed)
	assert.Equal(t, len(log.Log), 10)

	// Sampling: a lower probability logs fewer of the same allocations.
	p, fiveK := 0.05, 5000.0
	set, err = wdclient.SetAllocations(e.wd, wire.AllocationArgs{AllocationSamplingProbability: &p, MaxAllocationsLogLength: &fiveK})
	assert.NilError(t, err)
	assert.Equal(t, set.SamplingInterval, 624.0)
	e.run(t, `makeThings(20000)`)
	log, err = wdclient.DrainAllocations(e.wd)
	assert.NilError(t, err)
	assert.Assert(t, len(log.Log) > 0 && len(log.Log) < 10000, "%d entries", len(log.Log))

	off := false
	set, err = wdclient.SetAllocations(e.wd, wire.AllocationArgs{TrackingAllocationSites: &off})
	assert.NilError(t, err)
	assert.Assert(t, !set.TrackingAllocationSites)
	_, err = wdclient.DrainAllocations(e.wd)
	assert.Equal(t, wdError(t, err).Code, wire.UnsupportedOperation)
}

// collectGarbage forces a full GC in the current page (as DevTools'
// button does).
func collectGarbage(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	sess, ok := e.Server.Sessions().Get(e.wd.SessionID())
	assert.Assert(t, ok)
	c, err := cdp.Dial(ctx, engine.Of(sess).(*chromium.Engine).DebuggerAddress())
	assert.NilError(t, err)
	defer c.Close()
	b := cdp.NewBrowser(c)
	h, err := e.wd.CurrentWindowHandle()
	assert.NilError(t, err)
	s, err := b.Attach(ctx, target.ID(h))
	assert.NilError(t, err)
	_, err = cdproto.Call(ctx, s, heapprofiler.CollectGarbage, cdproto.Empty{})
	assert.NilError(t, err)
}

// A forced GC shows up in the GC log as a non-incremental full collection
// of the page's renderer. While the log collects, forcesample (which needs
// the same tracing session) says it cannot run; afterwards it can.
func TestGCLog(t *testing.T) {
	e := start(t)
	e.open(t, "foo.html")

	st, err := wdclient.CollectGCLog(e.wd, true)
	assert.NilError(t, err)
	assert.Assert(t, st.Collecting)
	e.run(t, `churn(8)`) // minor GCs
	collectGarbage(t, e)

	err = wdclient.ForceSample(e.wd)
	we := wdError(t, err)
	assert.Equal(t, we.Code, wire.UnsupportedOperation)
	assert.Assert(t, strings.Contains(we.Message, "tracing"), we.Message)

	gc, err := wdclient.GCLogEntries(e.wd)
	assert.NilError(t, err)
	assert.Assert(t, gc.Collecting, "still collecting after a read: %+v", gc)
	var forced, minor *wire.GCEntry
	for i, entry := range gc.Entries {
		assert.Assert(t, len(entry.Collections) > 0)
		last := entry.Collections[len(entry.Collections)-1]
		assert.Assert(t, last.EndTimestamp >= last.StartTimestamp)
		if entry.Reason != nil && *entry.Reason == "low memory notification" && forced == nil {
			forced = &gc.Entries[i]
		}
		if entry.Collector == "scavenger" && entry.Thread == "CrRendererMain" {
			minor = &gc.Entries[i]
		}
	}
	assert.Assert(t, forced != nil, "no forced GC in %+v", gc.Entries)
	assert.Equal(t, forced.Collector, "mark-compactor")
	assert.Equal(t, forced.Thread, "CrRendererMain")
	assert.Assert(t, forced.NonincrementalReason != nil, "a forced GC is not incremental")
	assert.Assert(t, forced.HeapBytesBefore != nil && forced.HeapBytesAfter != nil)
	assert.Assert(t, minor != nil && minor.NonincrementalReason == nil, "%+v", minor)

	// Cycle numbers increase per isolate.
	last := map[int64]int64{}
	for _, entry := range gc.Entries {
		assert.Assert(t, entry.GCCycleNumber > last[entry.Tid], "%+v", gc.Entries)
		last[entry.Tid] = entry.GCCycleNumber
	}

	// Read again: nothing twice; a GC after the restart is there.
	collectGarbage(t, e)
	gc, err = wdclient.GCLogEntries(e.wd)
	assert.NilError(t, err)
	n := 0
	for _, entry := range gc.Entries {
		assert.Assert(t, entry.GCCycleNumber > last[entry.Tid] || entry.Pid != forced.Pid)
		if entry.Reason != nil && *entry.Reason == "low memory notification" {
			n++
		}
	}
	assert.Assert(t, n >= 1, "%+v", gc.Entries)

	st, err = wdclient.CollectGCLog(e.wd, false)
	assert.NilError(t, err)
	assert.Assert(t, !st.Collecting)
	assert.NilError(t, wdclient.ForceSample(e.wd))
	gc, err = wdclient.GCLogEntries(e.wd)
	assert.NilError(t, err)
	assert.Assert(t, !gc.Collecting)
}

// Live objects between two points: what was allocated in between and is
// still alive, grouped by class and creation site; objects from before
// the start are not there.
func TestLiveObjects(t *testing.T) {
	e := start(t)
	_, err := wdclient.StopLiveObjects(e.wd)
	assert.Equal(t, wdError(t, err).Code, wire.UnsupportedOperation, "stop before start")

	// V8's allocation tracker now and then loses the site of objects that
	// a GC moves (measured: about one run in six of this scenario, most
	// Foo then have no trace). That is V8's to fix; the test tries the
	// scenario up to three times on a fresh page and needs one exact run.
	var problems []string
	for attempt := 0; attempt < 3; attempt++ {
		e.open(t, "foo.html")
		e.run(t, `makeEarly(1000)`)
		assert.NilError(t, wdclient.StartLiveObjects(e.wd))
		assert.Equal(t, wdError(t, wdclient.StartLiveObjects(e.wd)).Code, wire.UnsupportedOperation, "start twice")
		e.run(t, `makeFoos(500); makeThings(1000); churn(4)`)
		live, err := wdclient.StopLiveObjects(e.wd)
		assert.NilError(t, err)
		_, err = wdclient.StopLiveObjects(e.wd)
		assert.Equal(t, wdError(t, err).Code, wire.UnsupportedOperation, "stop twice")
		for _, g := range live.LiveObjects {
			assert.Assert(t, g.Class != "Early", "an object from before the start: %+v", g)
		}
		if p := checkLive(live); p != "" {
			problems = append(problems, p)
			t.Logf("attempt %d: %s", attempt+1, p)
			continue
		}
		return
	}
	t.Fatalf("no exact run in three: %v", problems)
}

// checkLive says what is wrong with the live objects of the scenario, or "".
func checkLive(live wire.LiveObjects) string {
	group := func(class, fn string) *wire.LiveObjectGroup {
		for i, g := range live.LiveObjects {
			if g.Class == class && len(g.CreatedFrom) > 0 && g.CreatedFrom[0].FunctionDisplayName == fn {
				return &live.LiveObjects[i]
			}
		}
		return nil
	}
	foo := group("Foo", "makeFoos")
	switch {
	case foo == nil:
		return fmt.Sprintf("no Foo from makeFoos among %d groups", len(live.LiveObjects))
	case foo.Count != 500 || foo.InstanceSize < 12*500:
		return fmt.Sprintf("Foo from makeFoos: %d objects, %d bytes", foo.Count, foo.InstanceSize)
	case !strings.HasSuffix(foo.CreatedFrom[0].Source, "/debuggermemory/things.js"):
		return "Foo's site is not in things.js: " + foo.CreatedFrom[0].Source
	}
	// Every tenth object survives, and V8 keeps one more: the object
	// literal's boilerplate, which it makes when the literal first runs.
	if things := group("Object", "makeThings"); things == nil || (things.Count != 100 && things.Count != 101) {
		return fmt.Sprintf("Object from makeThings: %+v", things)
	}
	return ""
}
