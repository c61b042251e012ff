package webkitgtk_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/webkitgtk/webkitgtktest"
	"github.com/wdext/wdext/internal/e2e"
)

// The polyfill is in every document loaded over http before the page's
// own scripts run, in cross-site frames too, and standards mode is kept.
func TestInjectAtDocumentStart(t *testing.T) {
	env := webkitgtktest.Start(t)
	pages := e2e.ServePages(t, e2e.Testdata("polyfill"), nil)
	id, r := newSession(t, env.URL, map[string]any{})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	s := env.URL + "/session/" + id
	r = do(t, "POST", s+"/url", map[string]any{"url": pages.A + "/early.html"})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	r = do(t, "POST", s+"/execute/async", map[string]any{"args": []any{}, "script": `const done = arguments[0];
const f = document.getElementById("cross");
f.onload = () => done([window.early, document.compatMode, Object.keys(window).includes("Profiler")]);
f.src = "` + pages.B + `/early.html";`})
	var got []any
	assert.NilError(t, json.Unmarshal(r.Value, &got), "%s", r.Value)
	assert.DeepEqual(t, got, []any{"function", "CSS1Compat", false})
	r = do(t, "POST", s+"/execute/async", map[string]any{"args": []any{}, "script": `window.fetched.then(arguments[0])`})
	var fetched string
	assert.NilError(t, json.Unmarshal(r.Value, &fetched))
	assert.Assert(t, !strings.Contains(fetched, "wdext.profiler"), "a fetched HTML resource got the polyfill: %s", fetched)
	r = do(t, "POST", s+"/frame", map[string]any{"id": 0})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	r = do(t, "POST", s+"/execute/sync", map[string]any{"args": []any{}, "script": `return [window.early, location.origin]`})
	assert.Equal(t, string(r.Value), `["function","`+pages.B+`"]`)
}

// Through the inspector's bootstrap script the polyfill also reaches what
// the proxy cannot: a page whose Content-Security-Policy forbids inline
// scripts, srcdoc, about:blank and data: frames, https pages, windows
// opened with New Window, and sessions whose client set its own proxy.
func TestInjectBeyondTheProxy(t *testing.T) {
	env := webkitgtktest.Start(t)
	pages := e2e.ServePages(t, e2e.Testdata("polyfill"), nil)
	tlsPage := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("isolated") {
			// Cross-origin isolated: WebKit loads it in a web process of
			// its own, whose new inspector backend gets the bootstrap
			// script while the navigation waits (PrepareBackends).
			w.Header().Set("Cross-Origin-Opener-Policy", "same-origin")
			w.Header().Set("Cross-Origin-Embedder-Policy", "require-corp")
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><title>tls</title><script>window.early = typeof Profiler</script><body>`))
	}))
	t.Cleanup(tlsPage.Close)
	for _, caps := range []map[string]any{{"acceptInsecureCerts": true}, {"acceptInsecureCerts": true, "proxy": map[string]any{"proxyType": "direct"}}} {
		id, r := newSession(t, env.URL, caps)
		assert.Equal(t, r.Status, 200, "%s", r.Value)
		s := env.URL + "/session/" + id
		// Another site next: WebKit may swap processes, and with them the
		// inspector's backend.
		for _, site := range []string{pages.A, pages.B, pages.C} {
			r = do(t, "POST", s+"/url", map[string]any{"url": site + "/hardened.html"})
			assert.Equal(t, r.Status, 200, "%s", r.Value)
			r = do(t, "POST", s+"/execute/sync", map[string]any{"args": []any{}, "script": `return [window.early,
				typeof document.getElementById("srcdoc").contentWindow.Profiler,
				typeof document.getElementById("blank").contentWindow.Profiler]`})
			assert.Equal(t, string(r.Value), `["function","function","function"]`, "capabilities %v, %s", caps, site)
		}
		// https (the proxy only tunnels it) and a data: frame.
		r = do(t, "POST", s+"/url", map[string]any{"url": tlsPage.URL})
		assert.Equal(t, r.Status, 200, "%s", r.Value)
		r = do(t, "POST", s+"/execute/sync", map[string]any{"args": []any{}, "script": `const f = document.createElement("iframe");
			f.src = "data:text/html,<p>data"; document.body.append(f); return [location.protocol, window.early]`})
		assert.Equal(t, string(r.Value), `["https:","function"]`, "capabilities %v", caps)
		for i := 0; ; i++ {
			do(t, "POST", s+"/frame", map[string]any{"id": 0})
			r = do(t, "POST", s+"/execute/sync", map[string]any{"args": []any{}, "script": `return [location.protocol, typeof Profiler]`})
			do(t, "POST", s+"/frame", map[string]any{"id": nil})
			if string(r.Value) == `["data:","function"]` {
				break
			}
			assert.Assert(t, i < 100, "capabilities %v: data: frame: %s", caps, r.Value)
			time.Sleep(20 * time.Millisecond)
		}
		// A cross-origin isolated https page, in a web process of its own.
		r = do(t, "POST", s+"/url", map[string]any{"url": tlsPage.URL + "/?isolated"})
		assert.Equal(t, r.Status, 200, "%s", r.Value)
		r = do(t, "POST", s+"/execute/sync", map[string]any{"args": []any{}, "script": `return [crossOriginIsolated, window.early]`})
		assert.Equal(t, string(r.Value), `[true,"function"]`, "capabilities %v: cross-origin isolated https page", caps)

		// A window opened later gets it before the client can navigate
		// there; script opens none (window.open gives null).
		r = do(t, "POST", s+"/execute/sync", map[string]any{"args": []any{}, "script": `return window.open("about:blank")`})
		assert.Equal(t, string(r.Value), "null")
		r = do(t, "POST", s+"/window/new", map[string]any{})
		assert.Equal(t, r.Status, 200, "%s", r.Value)
		var nw struct{ Handle, Type string }
		assert.NilError(t, json.Unmarshal(r.Value, &nw))
		assert.Equal(t, nw.Type, "window")
		do(t, "POST", s+"/window", map[string]any{"handle": nw.Handle})
		do(t, "POST", s+"/url", map[string]any{"url": pages.B + "/hardened.html"})
		r = do(t, "POST", s+"/execute/sync", map[string]any{"args": []any{}, "script": `return [window.early, typeof document.getElementById("srcdoc").contentWindow.Profiler]`})
		assert.Equal(t, string(r.Value), `["function","function"]`, "capabilities %v, second window", caps)
		r = do(t, "GET", s+"/window/handles", nil)
		var handles []string
		assert.NilError(t, json.Unmarshal(r.Value, &handles))
		assert.Equal(t, len(handles), 2)
		do(t, "DELETE", s, nil)
	}
}
