package wpt_test

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tebeka/selenium"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/engine/kind"
	"github.com/wdext/wdext/engine/webkitgtk"
	"github.com/wdext/wdext/engine/webkitgtk/webkitgtktest"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/wpt"
)

// fidelity is what testdata/wpt-fidelity/top.https.sub.html reports.
type fidelity struct {
	Origin   string            `json:"origin"`
	HostInfo map[string]any    `json:"hostInfo"`
	Redirect bool              `json:"redirected"`
	PyFailed bool              `json:"pyFailed"`
	Frames   map[string]echoed `json:"frames"`
	WWW2     string            `json:"www2"`
	IDN      string            `json:"idn"`
	AltHTTPS string            `json:"altHTTPS"`
	Missing  string            `json:"nonexistent"`
}

type echoed struct {
	Origin, Domain, Served, FetchSite, Cookie string
}

// Real Chromium through chromedriver and wdext, told by
// chromium.WPTCapabilities to resolve WPT's host names and trust the server's
// certificate, sees wptserve's arrangement: an HTTPS page on
// web-platform.test with frames on the other HTTPS port, on www1. (same
// site, so a SameSite=Strict cookie goes along), on élève. and on
// not-web-platform.test (cross-site); every substitution; redirect.py; a
// 501 for a Python handler wdext does not run; nonexistent. never resolving.
func TestServerFidelity(t *testing.T) {
	env := chromiumtest.Start(t)
	srv := startFidelityServer(t)
	wd := e2e.Session(t, env.URL, chromium.WPTCapabilities(served(srv, false)))

	got := loadFidelity(t, srv, wd)
	checkFidelity(t, srv, got)

	// Without the SPKI list, the same browser refuses the certificate: the
	// switch is what makes it trusted, not some leniency of Chromium's.
	caps := chromium.WPTCapabilities(served(srv, false))
	opts := caps["goog:chromeOptions"].(map[string]any)
	opts["args"] = slices.DeleteFunc(opts["args"].([]string), func(a string) bool {
		return strings.HasPrefix(a, "--ignore-certificate-errors-spki-list=")
	})
	strict := e2e.Session(t, env.URL, caps)
	assert.NilError(t, strict.Get(srv.HTTPSOrigin()+"/redirected.js"))
	title, err := strict.ExecuteScript(`return document.title`, nil)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(title, "Privacy error"), "Chromium's certificate interstitial")

	// Plain HTTP on the WPT names too, on both ports.
	for _, origin := range []string{srv.Origin(), srv.Origin2(), srv.AltOrigin()} {
		assert.NilError(t, wd.Get(origin+"/redirected.js"))
		loc, err := wd.ExecuteScript(`return location.origin`, nil)
		assert.NilError(t, err)
		assert.Check(t, is.Equal(loc, origin))
	}

	// Over plain HTTP (no certificate in the way), nonexistent. names do
	// not resolve while www1. does: a no-cors fetch fails only when it
	// cannot connect.
	port := srv.Origin()[strings.LastIndex(srv.Origin(), ":"):]
	reach := func(host string) any {
		v, err := wd.ExecuteScriptAsync(`const done = arguments[arguments.length - 1];
			fetch(arguments[0], {mode: "no-cors"}).then(() => done("reached"), (e) => done(e.name));`,
			[]any{"http://" + host + port + "/redirected.js"})
		assert.NilError(t, err)
		return v
	}
	assert.Check(t, is.Equal(reach("www1.web-platform.test"), "reached"))
	assert.Check(t, is.Equal(reach("nonexistent.web-platform.test"), "TypeError"), "nonexistent. resolves")
	assert.Check(t, is.Equal(reach("nonexistent.not-web-platform.test"), "TypeError"), "nonexistent. resolves")
}

// WebKitGTK cannot be told to resolve WPT's names (see
// webkitgtk.WPTCapabilities), so it gets the loopback arrangement, over TLS
// with acceptInsecureCerts: the same page, the other HTTPS port, the
// alternate host's, redirect.py and a .py 501.
func TestServerFidelityWebKitGTK(t *testing.T) {
	env := webkitgtktest.Start(t)
	srv, err := wpt.NewServer(e2e.Testdata("wpt-fidelity"), wpt.Options{
		MainHost: "localhost", SecondPort: true, HTTPS: true, ErrorLog: log.New(io.Discard, "", 0)})
	assert.NilError(t, err)
	assert.NilError(t, srv.Start(context.Background()))
	t.Cleanup(func() { srv.Close() })
	wd := e2e.Session(t, env.URL, webkitgtk.WPTCapabilities(served(srv, false)))
	got := loadFidelity(t, srv, wd)

	port := func(origin string) string { u, _ := url.Parse(origin); return u.Port() }
	https0, https1 := port(srv.HTTPSOrigin()), port(srv.HTTPSOrigin2())
	assert.Check(t, is.Equal(got.Origin, "https://localhost:"+https0))
	assert.Check(t, is.DeepEqual(got.HostInfo, map[string]any{
		"host": "localhost", "main": "localhost",
		"www": "127.0.0.1", "www1": "127.0.0.1", "www2": "127.0.0.1", "idn": "127.0.0.1", "eleve": "127.0.0.1",
		"nonexistent": "nonexistent.invalid", "alt": "127.0.0.1", "altWww1": "127.0.0.1",
		"http":  []any{port(srv.Origin()), port(srv.Origin2())},
		"https": []any{https0, https1},
		"wss":   https0,
	}))
	assert.Check(t, got.Redirect, "redirect.py led the <script> to the alternate HTTPS origin")
	assert.Check(t, got.PyFailed, "an unimplemented .py fails to load (501)")
	assert.Check(t, is.DeepEqual(srv.TakeUnsupported(), []string{"/unsupported.py"}))
	origins := map[string]string{}
	for id, f := range got.Frames {
		origins[id] = f.Origin
		assert.Check(t, is.Equal(f.Served, f.Origin), id)
	}
	assert.Check(t, is.DeepEqual(origins, map[string]string{
		"port2": "https://localhost:" + https1, "www1": "https://127.0.0.1:" + https0,
		"eleve": "https://127.0.0.1:" + https1, "alt": "https://127.0.0.1:" + https0,
	}))
	assert.Check(t, is.Equal(got.WWW2+got.IDN+got.AltHTTPS, "okokok"))
	assert.Check(t, is.Equal(got.Missing, "TypeError"), "nonexistent.invalid never resolves")
}

func startFidelityServer(t *testing.T) *wpt.Server {
	srv, err := wpt.NewServer(e2e.Testdata("wpt-fidelity"), wpt.Options{
		WPTHosts: true, SecondPort: true, HTTPS: true, ErrorLog: log.New(io.Discard, "", 0)})
	assert.NilError(t, err)
	assert.NilError(t, srv.Start(context.Background()))
	t.Cleanup(func() { srv.Close() })
	return srv
}

// loadFidelity loads the page as a runner would and waits for its report.
func loadFidelity(t *testing.T, srv *wpt.Server, wd selenium.WebDriver) fidelity {
	t.Helper()
	page := srv.URL("/top.https.sub.html")
	assert.Assert(t, strings.HasPrefix(page, srv.HTTPSOrigin()+"/"), page)
	assert.NilError(t, wd.Get(page))
	var got fidelity
	deadline := time.Now().Add(60 * time.Second)
	for {
		raw, err := wd.ExecuteScript(`return window.fidelity ? JSON.stringify(window.fidelity) : null`, nil)
		assert.NilError(t, err)
		if s, ok := raw.(string); ok {
			assert.NilError(t, json.Unmarshal([]byte(s), &got))
			t.Logf("%s", s)
			return got
		}
		if time.Now().After(deadline) {
			state, err := wd.ExecuteScript(`return JSON.stringify({href: location.href, title: document.title, body: document.body && document.body.innerText.slice(0, 200), redirected: window.redirected, pyFailed: window.pyFailed})`, nil)
			t.Fatalf("the page did not settle; frames or fetches hung: %v %v", state, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func checkFidelity(t *testing.T, srv *wpt.Server, got fidelity) {
	t.Helper()
	port := func(origin string) string { u, _ := url.Parse(origin); return u.Port() }
	https0, https1 := port(srv.HTTPSOrigin()), port(srv.HTTPSOrigin2())
	assert.Check(t, is.Equal(got.Origin, "https://web-platform.test:"+https0))
	assert.Check(t, is.DeepEqual(got.HostInfo, map[string]any{
		"host": "web-platform.test", "main": "web-platform.test",
		"www": "www.web-platform.test", "www1": "www1.web-platform.test", "www2": "www2.web-platform.test",
		"idn": "xn--n8j6ds53lwwkrqhv28a.web-platform.test", "eleve": "xn--lve-6lad.web-platform.test",
		"nonexistent": "nonexistent.web-platform.test",
		"alt":         "not-web-platform.test", "altWww1": "www1.not-web-platform.test",
		"http":  []any{port(srv.Origin()), port(srv.Origin2())},
		"https": []any{https0, https1},
		"wss":   https0,
	}))
	assert.Check(t, got.Redirect, "redirect.py led the <script> to the cross-site HTTPS origin")
	assert.Check(t, got.PyFailed, "an unimplemented .py fails to load (501)")
	assert.Check(t, is.DeepEqual(srv.TakeUnsupported(), []string{"/unsupported.py"}))

	cookie := "fidelity=strict"
	assert.Check(t, is.DeepEqual(got.Frames, map[string]echoed{
		"port2": {Origin: "https://web-platform.test:" + https1, Domain: "web-platform.test",
			Served: "https://web-platform.test:" + https1, FetchSite: "same-site", Cookie: cookie},
		"www1": {Origin: "https://www1.web-platform.test:" + https0, Domain: "www1.web-platform.test",
			Served: "https://www1.web-platform.test:" + https0, FetchSite: "same-site", Cookie: cookie},
		"eleve": {Origin: "https://xn--lve-6lad.web-platform.test:" + https1, Domain: "xn--lve-6lad.web-platform.test",
			Served: "https://xn--lve-6lad.web-platform.test:" + https1, FetchSite: "same-site", Cookie: cookie},
		"alt": {Origin: "https://not-web-platform.test:" + https0, Domain: "not-web-platform.test",
			Served: "https://not-web-platform.test:" + https0, FetchSite: "cross-site", Cookie: "none"},
	}))
	assert.Check(t, is.Equal(got.WWW2, "ok"))
	assert.Check(t, is.Equal(got.IDN, "ok"))
	assert.Check(t, is.Equal(got.AltHTTPS, "ok"))
	assert.Check(t, is.Equal(got.Missing, "TypeError"), "nonexistent. never resolves")
}

// An experimental web platform feature (the Profiler in dedicated
// workers) is there only in a session asked for with experimental
// features, as wdext wpt --enable-experimental asks.
func TestEnableExperimental(t *testing.T) {
	env := chromiumtest.Start(t)
	srv := startFidelityServer(t)
	exposed := func(experimental bool) map[string]any {
		wd := e2e.Session(t, env.URL, chromium.WPTCapabilities(served(srv, experimental)))
		assert.NilError(t, wd.Get(srv.URL("/experimental.html")))
		v, err := wd.ExecuteScriptAsync(`const done = arguments[arguments.length - 1]; window.exposed.then(done);`, nil)
		assert.NilError(t, err)
		assert.NilError(t, wd.Quit())
		return v.(map[string]any)
	}
	off, on := exposed(false), exposed(true)
	t.Logf("without: %v; with --enable-experimental-web-platform-features: %v", off, on)
	assert.Check(t, is.Equal(off["workerProfiler"], "undefined"))
	assert.Check(t, is.Equal(on["workerProfiler"], "function"))
	assert.Check(t, is.Equal(off["windowProfiler"], "function"), "the window's Profiler is not experimental")
}

// served is what a kind's WPT capabilities depend on of srv.
func served(srv *wpt.Server, experimental bool) kind.Served {
	return kind.Served{Hosts: srv.WPTHosts(), SPKIHash: srv.SPKIHash(), Experimental: experimental}
}
