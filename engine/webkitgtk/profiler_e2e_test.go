package webkitgtk_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/webkitgtk/webkitgtktest"
	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/internal/e2e"
)

// profilerPages serves testdata/webkitgtk on the e2e origins, with
// Document-Policy: js-profiling, and under /np/ without it.
func profilerPages(t *testing.T) *e2e.Pages {
	dir := e2e.Testdata("webkitgtk")
	files := http.StripPrefix("/np/", http.FileServer(http.Dir(dir)))
	return e2e.ServePages(t, dir, map[string]http.Handler{"/np/": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		files.ServeHTTP(w, r)
	})})
}

// newProfilerSession opens a session with caps and returns its URL.
func newProfilerSession(t *testing.T, base string, caps map[string]any) string {
	id, r := newSession(t, base, caps)
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	s := base + "/session/" + id
	t.Cleanup(func() { do(t, "DELETE", s, nil) })
	return s
}

const tryProfiler = `try { const p = new Profiler({sampleInterval: 10, maxBufferSize: 10}); p.stop(); return "ok"; }
catch (e) { return e.name + "/" + (e instanceof DOMException); }`

// constructed navigates to url and answers what new Profiler() does
// there, in the frame given by index (nil: the top). The policy arrives
// with the document through wdext's proxy, and through the inspector
// (Network domain) just after the document's context appears: the poll
// waits for the latter.
func constructed(t *testing.T, s, url string, frame any, want string) {
	t.Helper()
	r := do(t, "POST", s+"/url", map[string]any{"url": url})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	var got string
	for i := 0; i < 100; i++ {
		if frame != nil {
			do(t, "POST", s+"/frame", map[string]any{"id": frame})
		}
		r = do(t, "POST", s+"/execute/sync", map[string]any{"script": tryProfiler, "args": []any{}})
		do(t, "POST", s+"/frame", map[string]any{"id": nil})
		assert.NilError(t, json.Unmarshal(r.Value, &got), "%s", r.Value)
		if got == want {
			if i > 0 {
				t.Logf("%s (frame %v): %s after %d polls", url, frame, want, i)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s (frame %v): new Profiler(): %s, want %s", url, frame, got, want)
}

// Document-Policy js-profiling: without it, new Profiler() throws a
// NotAllowedError DOMException, with it the profiler starts; per
// document, so a frame without it cannot profile inside a page with it.
// Through wdext's proxy (the policy is in the document before its
// scripts), through the inspector only (a client's own proxy), and over
// https (which the proxy only tunnels).
func TestProfilerDocumentPolicy(t *testing.T) {
	env := webkitgtktest.Start(t)
	pages := profilerPages(t)
	tlsPage := func(policy bool) *httptest.Server {
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if policy {
				w.Header().Set("Document-Policy", "js-profiling")
			}
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Cache-Control", "no-store")
			w.Write([]byte(`<!doctype html><title>tls</title><p>tls`))
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	with, without := tlsPage(true), tlsPage(false)
	for _, caps := range []map[string]any{{"acceptInsecureCerts": true}, {"acceptInsecureCerts": true, "proxy": map[string]any{"proxyType": "direct"}}} {
		s := newProfilerSession(t, env.URL, caps)
		constructed(t, s, pages.A+"/busy.html", nil, "ok")
		constructed(t, s, pages.A+"/np/busy.html", nil, "NotAllowedError/true")
		// Another site: the inspector's backend may change.
		constructed(t, s, pages.B+"/np/busy.html", nil, "NotAllowedError/true")
		constructed(t, s, pages.B+"/busy.html", nil, "ok")
		constructed(t, s, pages.A+"/framed.html", 0, "NotAllowedError/true")
		constructed(t, s, pages.A+"/framed.html", nil, "ok")
		constructed(t, s, without.URL, nil, "NotAllowedError/true")
		constructed(t, s, with.URL, nil, "ok")
	}
}

// A dedicated worker has a Profiler (the inspector holds a new worker
// until wdext has put the polyfill in it), and forcesample reaches it.
// Its Document-Policy is its script's response's, or for a blob: or data:
// worker its creator's (the proposal for Document Policy in workers).
func TestProfilerInWorker(t *testing.T) {
	env := webkitgtktest.Start(t, forcesample.Register)
	pages := profilerPages(t)
	s := newProfilerSession(t, env.URL, map[string]any{})
	ask := func(msg string) string {
		r := do(t, "POST", s+"/execute/async", map[string]any{"script": `ask(arguments[0]).then(arguments[1])`, "args": []any{msg}})
		assert.Equal(t, r.Status, 200, "%s", r.Value)
		return string(r.Value)
	}
	for _, c := range []struct{ page, want string }{
		{"/worker.html", `["function","true"]`},
		{"/worker.html?blob", `["function","true"]`},
		{"/worker.html?data", `["function","true"]`},
		{"/np/worker.html", `["NotAllowedError"]`},
		{"/np/worker.html?blob", `["NotAllowedError"]`},
		{"/np/worker.html?data", `["NotAllowedError"]`},
	} {
		r := do(t, "POST", s+"/url", map[string]any{"url": pages.A + c.page})
		assert.Equal(t, r.Status, 200, "%s", r.Value)
		assert.Equal(t, ask("start"), c.want, c.page)
	}
	do(t, "POST", s+"/url", map[string]any{"url": pages.A + "/worker.html"})
	assert.Equal(t, ask("start"), `["function","true"]`)
	for range 2 {
		r := do(t, "POST", s+"/forcesample", map[string]any{})
		assert.Equal(t, r.Status, 200, "%s", r.Value)
	}
	assert.Equal(t, ask("stop"), "3", "one at construction, two forced")
}

// Periodic samples: a 300 ms busy loop under sampleInterval 10 yields
// samples, at least 10 ms apart, whose stacks name the looping function
// and its script; accessors are named as V8 and the spec's examples name
// them ("get someValue", "set someValue"), from JavaScriptCore's sampling
// profiler.
func TestProfilerPeriodicSamples(t *testing.T) {
	env := webkitgtktest.Start(t)
	pages := profilerPages(t)
	s := newProfilerSession(t, env.URL, map[string]any{})
	r := do(t, "POST", s+"/url", map[string]any{"url": pages.A + "/busy.html"})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	r = do(t, "POST", s+"/execute/async", map[string]any{"args": []any{}, "script": `const done = arguments[0];
const before = performance.now();
const p = new Profiler({sampleInterval: 10, maxBufferSize: 10000});
spin(300);
busyAccessors(100);
const stopping = performance.now();
p.stop().then((trace) => done({trace, before, after: performance.now(), stopMs: performance.now() - stopping}), (e) => done({error: String(e)}));`})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	var got struct {
		Trace struct {
			Resources []string
			Frames    []struct {
				Name       string
				ResourceID *int
				Line       int
				Column     int
			}
			Stacks []struct {
				ParentID *int
				FrameID  int
			}
			Samples []struct {
				Timestamp float64
				StackID   *int
			}
		}
		Before, After, StopMs float64
		Error                 string
	}
	assert.NilError(t, json.Unmarshal(r.Value, &got), "%s", r.Value)
	assert.Equal(t, got.Error, "")
	tr := got.Trace
	names := func(id *int) []string {
		var out []string
		for id != nil {
			st := tr.Stacks[*id]
			out = append(out, tr.Frames[st.FrameID].Name)
			id = st.ParentID
		}
		return out
	}
	seen := map[string]int{}
	last := -1.0
	for _, smp := range tr.Samples {
		assert.Assert(t, smp.Timestamp >= got.Before && smp.Timestamp <= got.After, "sample at %v outside [%v, %v]", smp.Timestamp, got.Before, got.After)
		assert.Assert(t, last < 0 || smp.Timestamp-last >= 10, "samples at %v and %v: less than sampleInterval apart", last, smp.Timestamp)
		last = smp.Timestamp
		for _, n := range names(smp.StackID) {
			seen[n]++
		}
	}
	t.Logf("%d samples; frames seen: %v; stop() took %v ms", len(tr.Samples), seen, got.StopMs)
	if os.Getenv("WDEXT_DUMP_TRACE") != "" {
		t.Logf("%s", r.Value)
	}
	assert.Assert(t, seen["spin"] >= 2, "spin on %d samples of %d: %v", seen["spin"], len(tr.Samples), seen)
	assert.Assert(t, seen["get someValue"] >= 1 && seen["set someValue"] >= 1, "accessors: %v", seen)
	for _, f := range tr.Frames {
		if f.Name == "spin" {
			assert.Assert(t, f.ResourceID != nil && tr.Resources[*f.ResourceID] == pages.A+"/busy.js", "%+v %v", f, tr.Resources)
			assert.Equal(t, f.Line, 5, "spin's line in busy.js: where it is defined")
		}
	}
}

// A profiler samples its own realm's frames only: a loop in a cross-site
// iframe is on the iframe's profiler's stacks and not on the top
// document's (whose samples then have no stack), as the spec's realm
// check says; a builtin is kept when called from the realm's own code.
func TestProfilerPeriodicSamplesRealm(t *testing.T) {
	env := webkitgtktest.Start(t)
	pages := profilerPages(t)
	s := newProfilerSession(t, env.URL, map[string]any{})
	r := do(t, "POST", s+"/url", map[string]any{"url": pages.A + "/cross.html?src=" + pages.B + "/busy.html"})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	r = do(t, "POST", s+"/execute/async", map[string]any{"args": []any{}, "script": `window.childLoaded.then(() => arguments[0]())`})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	start := `window.p = new Profiler({sampleInterval: 10, maxBufferSize: 10000}); return 1`
	do(t, "POST", s+"/execute/sync", map[string]any{"args": []any{}, "script": start})
	do(t, "POST", s+"/frame", map[string]any{"id": 0})
	do(t, "POST", s+"/execute/sync", map[string]any{"args": []any{}, "script": start + `, spin(200)`})
	stop := `p.stop().then((trace) => arguments[0]([...new Set(trace.frames.map((f) => f.name + "@" + (trace.resources[f.resourceId] ?? "")))]))`
	var inFrame, inTop []string
	r = do(t, "POST", s+"/execute/async", map[string]any{"args": []any{}, "script": stop})
	assert.NilError(t, json.Unmarshal(r.Value, &inFrame), "%s", r.Value)
	do(t, "POST", s+"/frame", map[string]any{"id": nil})
	r = do(t, "POST", s+"/execute/async", map[string]any{"args": []any{}, "script": stop})
	assert.NilError(t, json.Unmarshal(r.Value, &inTop), "%s", r.Value)
	t.Logf("frame's frames %v; top's %v", inFrame, inTop)
	assert.Assert(t, slices.Contains(inFrame, "spin@"+pages.B+"/busy.js"), "%v", inFrame)
	for _, f := range inTop {
		// By resource: the top's own URL names the iframe's in its query.
		_, resource, _ := strings.Cut(f, "@")
		assert.Assert(t, !strings.HasPrefix(resource, pages.B), "the top's trace has the iframe's frame %s", f)
	}
	// Builtins count as their caller's: the iframe's performance.now().
	assert.Assert(t, !slices.Contains(inTop, "now@"), "%v", inTop)
	assert.Assert(t, slices.Contains(inFrame, "now@"), "%v", inFrame)
}
