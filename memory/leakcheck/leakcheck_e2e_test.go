package leakcheck_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tebeka/selenium"
	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/engine/webkitgtk/webkitgtktest"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/memory/leakcheck"
	"github.com/wdext/wdext/webdriver/wdclient"
	"github.com/wdext/wdext/wire"
)

// iterations is how many times each test runs the scenario.
const iterations = 5

type env struct {
	pages *e2e.Pages
	wd    selenium.WebDriver
	c     *wdclient.Client
}

func start(t *testing.T) *env {
	t.Helper()
	e := chromiumtest.Start(t, leakcheck.Register)
	return session(t, e.URL, nil)
}

// startWebKitGTK is start on WebKitGTK.
func startWebKitGTK(t *testing.T) *env {
	t.Helper()
	e := webkitgtktest.Start(t, leakcheck.Register)
	return session(t, e.URL, webkitgtktest.Capabilities())
}

func session(t *testing.T, url string, caps selenium.Capabilities) *env {
	t.Helper()
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	wd := e2e.Session(t, url, caps)
	c, err := wdclient.For(wd)
	assert.NilError(t, err)
	return &env{pages: pages, wd: wd, c: c}
}

func (e *env) open(t *testing.T, page string) {
	t.Helper()
	assert.NilError(t, e.wd.Get(e.pages.A+"/leaks/"+page))
}

// check runs the leak check of a scenario on a freshly loaded page.
func (e *env) check(t *testing.T, page string) wire.LeakReport {
	t.Helper()
	e.open(t, page)
	assert.NilError(t, wdclient.LeakStart(e.wd))
	for range iterations {
		_, err := e.wd.ExecuteScript("round()", nil)
		assert.NilError(t, err)
	}
	r, err := wdclient.LeakStop(e.wd, iterations)
	assert.NilError(t, err)
	assert.Equal(t, r.Iterations, iterations)
	assert.Assert(t, r.BytesBefore > 0 && r.BytesAfter > 0, "%+v", r)
	return r
}

func wdError(t *testing.T, err error) *wire.Error {
	t.Helper()
	we, ok := err.(*wire.Error)
	assert.Assert(t, ok, "want a WebDriver error, got %T %v", err, err)
	return we
}

// verdict is a report's content without the figures that vary from run
// to run (bytes, which element of a group represents it, source lines).
func verdict(r wire.LeakReport) string {
	var b strings.Builder
	for _, l := range r.Leaks {
		fn := "null"
		if l.CreatedFrom != nil {
			fn = l.CreatedFrom.FunctionName
		}
		var path []string
		for _, p := range l.RetainerPath {
			if !strings.HasSuffix(p, "(element)") {
				path = append(path, p)
			}
		}
		fmt.Fprintf(&b, "%s %q %d/%d by %s from %s\n", l.Kind, l.Name, l.CountDelta, l.PerIteration, strings.Join(path, " → "), fn)
	}
	return b.String()
}

// The planted leaks of leaky.html, each once per iteration or more, and
// nothing else: not the garbage, the singleton or the span added and
// removed at every iteration.
const leakyVerdict = `objects "Foo" 15/3 by Window → store (property) → Array → Foo from makeFoos
detached-dom "HTMLDivElement div.dialog" 5/1 by Window → dialogs (property) → Array → HTMLDivElement div.dialog from openDialog
collection "Window.cache (Map)" 10/2 by Window → cache (property) → Map from remember
event-listeners "Window resize" 5/1 by ` + listenerPath + ` from listen
`

// listenerPath is the path to a window listener's handler in Blink.
const listenerPath = "Window → globalThis (property) → Window → blink::EventTargetData → blink::BasicHeapVector<…> → blink::HeapVectorBacking<…> → blink::RegisteredEventListener → EventListener → V8EventListener → ()"

func TestLeakCheck(t *testing.T) {
	e := start(t)
	e.open(t, "leaky.html")

	// Errors.
	_, err := wdclient.LeakStop(e.wd, iterations)
	we := wdError(t, err)
	assert.Equal(t, we.Code, wire.InvalidArgument)
	assert.ErrorContains(t, we, "leaks/stop before leaks/start")
	for _, body := range []string{`{"iterations": 0}`, `{"iterations": 2.5}`, `{"iterations": "5"}`, `{}`, `{"iterations": 5, "n": 1}`} {
		err := e.c.Do(t.Context(), "POST", "/session/"+e.wd.SessionID()+"/wdext/memory/leaks/stop", []byte(body), nil)
		assert.Equal(t, wdError(t, err).Code, wire.InvalidArgument, body)
	}
	err = e.c.Do(t.Context(), "POST", "/session/"+e.wd.SessionID()+"/wdext/memory/leaks/start", []byte(`{"targets": "some"}`), nil)
	assert.Equal(t, wdError(t, err).Code, wire.InvalidArgument)

	// The verdict on the leaky page.
	r := e.check(t, "leaky.html")
	assert.Equal(t, verdict(r), leakyVerdict)
	for _, l := range r.Leaks {
		if l.CreatedFrom != nil {
			assert.Assert(t, strings.HasSuffix(l.CreatedFrom.URL, "/leaks/leaks.js") && l.CreatedFrom.Line > 0, "%+v", l.CreatedFrom)
		}
		if l.Kind != wire.LeakEventListeners {
			assert.Assert(t, l.BytesDelta > 0, "%+v", l)
		}
	}
	// A stop consumes the start.
	_, err = wdclient.LeakStop(e.wd, iterations)
	assert.Equal(t, wdError(t, err).Code, wire.InvalidArgument)

	// The clean twin: nothing.
	r = e.check(t, "clean.html")
	assert.DeepEqual(t, r.Leaks, []wire.Leak{})

	// A navigation between start and stop loses the baseline.
	e.open(t, "leaky.html")
	assert.NilError(t, wdclient.LeakStart(e.wd))
	e.open(t, "clean.html")
	_, err = wdclient.LeakStop(e.wd, iterations)
	assert.ErrorContains(t, wdError(t, err), "navigated or reloaded since leaks/start")
	// To another site, in another renderer process.
	e.open(t, "leaky.html")
	assert.NilError(t, wdclient.LeakStart(e.wd))
	assert.NilError(t, e.wd.Get(e.pages.B+"/leaks/clean.html"))
	_, err = wdclient.LeakStop(e.wd, iterations)
	assert.ErrorContains(t, wdError(t, err), "navigated or reloaded since leaks/start")
	// And the check works after those.
	assert.Equal(t, verdict(e.check(t, "leaky.html")), leakyVerdict)
}

// The same page and scenario give the same verdict 20 runs out of 20, and
// the clean twin nothing, 5 runs out of 5.
func TestLeakCheckDeterministic(t *testing.T) {
	e := start(t)
	for run := range 20 {
		assert.Equal(t, verdict(e.check(t, "leaky.html")), leakyVerdict, "run %d of 20", run+1)
	}
	for run := range 5 {
		r := e.check(t, "clean.html")
		assert.DeepEqual(t, r.Leaks, []wire.Leak{})
		assert.Assert(t, r.Leaks != nil, "run %d of 5 on the clean page: null, not []", run+1)
	}
}

// The planted leaks on WebKitGTK: the same groups, counts and paths, with
// no creation sites (JavaScriptCore keeps no allocation stacks).
const leakyVerdictWebKit = `objects "Foo" 15/3 by Window → store (property) → Array → Foo from null
detached-dom "HTMLDivElement div.dialog" 5/1 by Window → dialogs (property) → Array → HTMLDivElement div.dialog from null
collection "Window.cache (Map)" 10/2 by Window → cache (property) → Map from null
event-listeners "Window resize" 5/1 by Window → (internal) → Function() from null
`

func TestLeakCheckWebKitGTK(t *testing.T) {
	e := startWebKitGTK(t)
	for run := range 20 {
		r := e.check(t, "leaky.html")
		assert.Equal(t, verdict(r), leakyVerdictWebKit, "run %d of 20", run+1)
		for _, l := range r.Leaks {
			assert.Assert(t, l.CreatedFrom == nil, "%+v", l)
		}
	}
	for run := range 5 {
		r := e.check(t, "clean.html")
		assert.DeepEqual(t, r.Leaks, []wire.Leak{})
		assert.Assert(t, r.Leaks != nil, "run %d of 5 on the clean page", run+1)
	}
	// A navigation between start and stop loses the baseline.
	e.open(t, "leaky.html")
	assert.NilError(t, wdclient.LeakStart(e.wd))
	e.open(t, "clean.html")
	_, err := wdclient.LeakStop(e.wd, iterations)
	assert.ErrorContains(t, wdError(t, err), "navigated or reloaded since leaks/start")
	// Workers are not checked: "all" says so.
	we := wdError(t, wdclient.LeakStartAll(e.wd))
	assert.Equal(t, we.Code, wire.UnsupportedOperation)
	assert.ErrorContains(t, we, `"targets": "page" checks the page's VM`)
}
