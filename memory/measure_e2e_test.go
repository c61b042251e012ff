package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tebeka/selenium"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/memory"
	"github.com/wdext/wdext/memory/measurement"
	"github.com/wdext/wdext/webdriver/wdclient"
	"github.com/wdext/wdext/wire"
)

const mib = 1 << 20

// slack is how far above a known allocation an entry may be. Each entry
// holds the known ArrayBuffer (testdata/memory/alloc.js: N MiB, counted in
// full, so N MiB is a hard lower bound) plus its realm's own baseline: the
// V8 heap of an almost empty document or worker, measured at 0.2–1.1 MB on
// Chromium 156 for either source (an isolate with several frames is the
// largest). 4 MiB leaves room for that to grow across versions while
// staying below the smallest allocation (10 MiB): any allocation counted
// in the wrong entry breaks a bound.
const slack = 4 * mib

// load opens the test page on site A with options, and waits for its
// frames and worker.
func load(t testing.TB, wd selenium.WebDriver, pages *e2e.Pages, query string) {
	t.Helper()
	assert.NilError(t, wd.Get(pages.A+"/memory/top.html?"+query))
	_, err := wd.ExecuteScriptAsync(`window.ready.then(() => arguments[0]())`, nil)
	assert.NilError(t, err)
}

// page is the test page with every part: a same-origin iframe, a
// cross-site (out-of-process) iframe holding 20 MiB, a dedicated worker
// holding 50 MiB; the page itself holds 10 MiB.
func page(pages *e2e.Pages, isolated bool) string {
	q := "mb=10&cross=" + pages.B + "&crossmb=20&workermb=50"
	if isolated {
		q = "isolated&" + q
	}
	return q
}

// entries returns the entries with an attribution for which match holds.
func entries(m *wire.MemoryMeasurement, match func(wire.MemoryAttribution) bool) []wire.MemoryBreakdownEntry {
	var out []wire.MemoryBreakdownEntry
	for _, e := range m.Breakdown {
		if slices.ContainsFunc(e.Attribution, match) {
			out = append(out, e)
		}
	}
	return out
}

func scope(s string) func(wire.MemoryAttribution) bool {
	return func(a wire.MemoryAttribution) bool { return a.Scope == s }
}

func container(id string) func(wire.MemoryAttribution) bool {
	return func(a wire.MemoryAttribution) bool { return a.Container != nil && a.Container.ID == id }
}

func topWindow(pages *e2e.Pages) func(wire.MemoryAttribution) bool {
	return func(a wire.MemoryAttribution) bool {
		return a.Scope == wire.ScopeWindow && a.Container == nil && strings.HasPrefix(a.URL, pages.A+"/memory/top.html")
	}
}

// one returns the single entry attributed as match says.
func one(t *testing.T, m *wire.MemoryMeasurement, what string, match func(wire.MemoryAttribution) bool) wire.MemoryBreakdownEntry {
	t.Helper()
	es := entries(m, match)
	assert.Equal(t, len(es), 1, "entries for %s in %s", what, dump(m))
	return es[0]
}

func within(t *testing.T, e wire.MemoryBreakdownEntry, what string, allocated uint64) {
	t.Helper()
	assert.Assert(t, e.Bytes >= allocated && e.Bytes <= allocated+slack,
		"%s: %d bytes, want %d MiB + at most %d MiB of baseline", what, e.Bytes, allocated/mib, slack/mib)
}

func dump(m *wire.MemoryMeasurement) string {
	b, _ := json.MarshalIndent(m, "", "  ")
	return string(b)
}

func measure(t *testing.T, wd selenium.WebDriver, opts wdclient.MeasureOptions) *wire.MemoryMeasurement {
	t.Helper()
	m, err := wdclient.MeasureMemory(wd, opts)
	assert.NilError(t, err)
	assert.NilError(t, measurement.Validate(*m), dump(m))
	return m
}

// The page API, made prompt: the worker's 50 MiB land in the worker's
// entry, the page's 10 MiB in the page's, the same-origin iframe has an
// entry with its container, and the cross-site iframe, in another
// process, is reported as Chromium reports it: 0 bytes (§2.2's
// address-space rule), under its container. The default source of an
// isolated page is the API.
func TestMeasureAPI(t *testing.T) {
	env := chromiumtest.Start(t, memory.Register)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	wd := e2e.Session(t, env.URL, chromiumtest.Capabilities())
	load(t, wd, pages, page(pages, true))

	for _, source := range []string{wire.SourceAPI, ""} {
		m := measure(t, wd, wdclient.MeasureOptions{Source: source})
		within(t, one(t, m, "the worker", scope(wire.ScopeDedicatedWorker)), "worker entry", 50*mib)
		within(t, one(t, m, "the page", topWindow(pages)), "page entry", 10*mib)
		same := one(t, m, "the same-origin iframe", container("same"))
		assert.DeepEqual(t, same.Attribution, []wire.MemoryAttribution{{
			URL:       pages.A + "/memory/frame.html?isolated&",
			Container: &wire.MemoryAttributionContainer{ID: "same", Src: "frame.html?isolated&"},
			Scope:     wire.ScopeWindow,
		}})
		cross := one(t, m, "the cross-site iframe", container("cross"))
		assert.DeepEqual(t, cross.Attribution, []wire.MemoryAttribution{{
			URL:       wire.CrossOriginURL,
			Container: &wire.MemoryAttributionContainer{ID: "cross", Src: pages.B + "/memory/frame.html?isolated&mb=20"},
			Scope:     wire.ScopeCrossOriginAggregated,
		}})
		assert.Equal(t, cross.Bytes, uint64(0), "source %q: the page API leaves out-of-process frames out", source)
	}
}

// The engine source on the same page: the cross-site iframe's 20 MiB
// appear under its container, the page's isolate holds the page and its
// same-origin iframe in one entry, the worker its own.
func TestMeasureEngine(t *testing.T) {
	env := chromiumtest.Start(t, memory.Register)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	wd := e2e.Session(t, env.URL, chromiumtest.Capabilities())

	for _, isolated := range []bool{true, false} {
		load(t, wd, pages, page(pages, isolated))
		// The engine reads heaps as they are, garbage included (the
		// previous page's buffers, if it shared a process): collect it,
		// as the page API's measurement does.
		_, err := wdclient.CollectGarbage(wd)
		assert.NilError(t, err)
		opts := wdclient.MeasureOptions{Source: wire.SourceEngine}
		if !isolated {
			opts.Source = "" // the default of a page that is not isolated
		}
		m := measure(t, wd, opts)
		within(t, one(t, m, "the worker", scope(wire.ScopeDedicatedWorker)), "worker entry", 50*mib)
		cross := one(t, m, "the cross-site iframe", container("cross"))
		within(t, cross, "cross-site iframe entry", 20*mib)
		assert.Equal(t, cross.Attribution[0].Scope, wire.ScopeCrossOriginAggregated)
		top := one(t, m, "the page", topWindow(pages))
		within(t, top, "page entry", 10*mib)
		assert.Assert(t, slices.ContainsFunc(top.Attribution, container("same")),
			"the same-origin iframe shares the page's isolate, so its entry: %s", dump(m))
		for _, e := range m.Breakdown {
			if len(e.Attribution) > 0 {
				assert.DeepEqual(t, e.Types, []string{measurement.TypeJavaScript})
			}
		}
	}
}

// A frame of the top-level site nested in the cross-site iframe lives in
// the page's process: the engine reports it in the page's entry, revealed
// (its URL, as the spec's example.com/iframe2 example) under the container
// of the cross-site iframe, which is aggregated on its own.
func TestMeasureEngineNested(t *testing.T) {
	env := chromiumtest.Start(t, memory.Register)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	wd := e2e.Session(t, env.URL, chromiumtest.Capabilities())
	load(t, wd, pages, "cross="+pages.B+"&crossmb=20&nested="+pages.A)
	_, err := wdclient.CollectGarbage(wd)
	assert.NilError(t, err)

	m := measure(t, wd, wdclient.MeasureOptions{Source: wire.SourceEngine})
	crossSrc := pages.B + "/memory/frame.html?mb=20&child=" + strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(
		pages.A+"/memory/frame.html?", ":", "%3A"), "/", "%2F"), "?", "%3F")
	nested := wire.MemoryAttribution{
		URL:       pages.A + "/memory/frame.html?",
		Container: &wire.MemoryAttributionContainer{ID: "cross", Src: crossSrc},
		Scope:     wire.ScopeWindow,
	}
	top := one(t, m, "the page", topWindow(pages))
	assert.Assert(t, is.Contains(top.Attribution, nested), dump(m))
	cross := one(t, m, "the cross-site iframe", scope(wire.ScopeCrossOriginAggregated))
	assert.Equal(t, len(cross.Attribution), 1, dump(m))
	within(t, cross, "cross-site iframe entry", 20*mib)
}

// source "api" needs cross-origin isolation; the error says so.
func TestMeasureAPINotIsolated(t *testing.T) {
	env := chromiumtest.Start(t, memory.Register)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	wd := e2e.Session(t, env.URL, chromiumtest.Capabilities())
	load(t, wd, pages, page(pages, false))
	_, err := wdclient.MeasureMemory(wd, wdclient.MeasureOptions{Source: wire.SourceAPI})
	var we *wire.Error
	assert.Assert(t, errors.As(err, &we), "%v", err)
	assert.Equal(t, we.Code, wire.UnsupportedOperation)
	assert.Assert(t, is.Contains(we.Message, "cross-origin-isolated"))
}

// A worker whose thread never returns to its event loop cannot run the
// garbage collection the page API waits for: the measurement times out,
// and the error names the worker. The engine source does not wait for it.
func TestMeasureBusyWorker(t *testing.T) {
	env := chromiumtest.Start(t, memory.Register)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	wd := e2e.Session(t, env.URL, chromiumtest.Capabilities())
	// The worker stays busy far longer than both timeouts below; they are
	// long enough for everything else to answer on a loaded machine.
	load(t, wd, pages, "isolated&workermb=50&workerbusy=120")

	_, err := wdclient.MeasureMemory(wd, wdclient.MeasureOptions{Source: wire.SourceAPI, Timeout: 5 * time.Second})
	var we *wire.Error
	assert.Assert(t, errors.As(err, &we), "%v", err)
	assert.Equal(t, we.Code, wire.Timeout)
	assert.Assert(t, is.Contains(we.Message, "Still pending: a garbage collection in dedicated worker "+pages.A+"/memory/worker.js"), we.Message)

	c, err := wdclient.For(wd)
	assert.NilError(t, err)
	err = c.Do(context.Background(), "POST", "/session/"+wd.SessionID()+"/wdext/memory/gc", map[string]any{"timeout": 5000}, nil)
	assert.Assert(t, errors.As(err, &we), "%v", err)
	assert.Equal(t, we.Code, wire.Timeout, we.Message)
	assert.Assert(t, is.Contains(we.Message, "dedicated worker "+pages.A+"/memory/worker.js"), we.Message)

	m := measure(t, wd, wdclient.MeasureOptions{Source: wire.SourceEngine})
	within(t, one(t, m, "the worker", scope(wire.ScopeDedicatedWorker)), "worker entry", 50*mib)
}

// gc collects every isolate: garbage dropped in the page and in the worker
// is gone afterwards, and each isolate is reported once.
func TestCollectGarbage(t *testing.T) {
	env := chromiumtest.Start(t, memory.Register)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	wd := e2e.Session(t, env.URL, chromiumtest.Capabilities())
	load(t, wd, pages, page(pages, false))

	// Garbage on the page's heap (several MB of small objects) and a
	// WeakRef in each of the page and the worker.
	_, err := wd.ExecuteScriptAsync(`const done = arguments[0];
		window.junk = Array.from({length: 200000}, (_, i) => ({i}));
		window.weak = new WeakRef({junk: new Array(1000).fill(0)});
		ask("weak").then(() => { delete window.junk; done(); });`, nil)
	assert.NilError(t, err)
	res, err := wdclient.CollectGarbage(wd)
	assert.NilError(t, err)

	var types []string
	for _, r := range res.Targets {
		types = append(types, r.Type)
		assert.Assert(t, r.UsedBefore > 0 && r.UsedAfter > 0, "%+v", r)
		// Nothing allocates much between the two readings, and the
		// collection frees at least what the page just dropped.
		assert.Assert(t, r.UsedAfter <= r.UsedBefore+64<<10, "%+v", r)
	}
	slices.Sort(types)
	assert.DeepEqual(t, types, []string{"iframe", "page", "worker"})
	pageRow := res.Targets[slices.IndexFunc(res.Targets, func(r wire.GCTarget) bool { return r.Type == "page" })]
	assert.Assert(t, strings.HasPrefix(pageRow.URL, pages.A+"/memory/top.html"))

	v, err := wd.ExecuteScriptAsync(`const done = arguments[0];
		ask("collected?").then((w) => done([window.weak.deref() === undefined, w]));`, nil)
	assert.NilError(t, err)
	assert.DeepEqual(t, v, []any{true, true})
}

// Parameters are checked before anything runs.
func TestMeasureBadArguments(t *testing.T) {
	env := chromiumtest.Start(t, memory.Register)
	wd := e2e.Session(t, env.URL, chromiumtest.Capabilities())
	c, err := wdclient.For(wd)
	assert.NilError(t, err)
	ctx := context.Background()
	code := func(path string, params any) wire.ErrorCode {
		t.Helper()
		var err error
		if raw, ok := params.(string); ok { // sent as is, even malformed
			err = post(ctx, c.URL+path, raw)
		} else {
			err = c.Do(ctx, "POST", path, params, nil)
		}
		if err == nil {
			return ""
		}
		var we *wire.Error
		if !errors.As(err, &we) {
			return wire.ErrorCode(fmt.Sprint(err))
		}
		t.Logf("%s: %s", we.Code, we.Message)
		return we.Code
	}
	measurePath := "/session/" + wd.SessionID() + "/wdext/memory/measure"
	gcPath := "/session/" + wd.SessionID() + "/wdext/memory/gc"
	for _, bad := range []string{
		`{"source": "heap"}`, `{"source": ""}`, `{"source": 1}`, `{"source": ["api"]}`,
		`{"timeout": -1}`, `{"timeout": 1.5}`, `{"timeout": "1000"}`, `{"timeout": 9007199254740992}`,
		`[]`, `"api"`, `{"source": "api"`,
	} {
		assert.Equal(t, code(measurePath, bad), wire.InvalidArgument, "measure %s", bad)
	}
	for _, bad := range []string{`{"timeout": -5}`, `{"source": "api"}`, `[1]`} {
		assert.Equal(t, code(gcPath, bad), wire.InvalidArgument, "gc %s", bad)
	}
	assert.Equal(t, code("/session/no-such-session/wdext/memory/measure", struct{}{}), wire.InvalidSessionID)
	assert.Equal(t, code("/session/no-such-session/wdext/memory/gc", struct{}{}), wire.InvalidSessionID)
	// Unknown members are ignored, as WebDriver commands do (Selenium's
	// Python client adds "sessionId" to every command).
	assert.Equal(t, code(measurePath, map[string]any{"sessionId": wd.SessionID(), "source": "engine", "timeout": nil}), wire.ErrorCode(""))
}

// post sends body as is and returns the W3C error of the reply, if any.
func post(ctx context.Context, url, body string) error {
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if we, ok := wire.ParseError(reply); ok {
		return we
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, reply)
	}
	return nil
}
