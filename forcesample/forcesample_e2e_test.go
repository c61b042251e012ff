package forcesample_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tebeka/selenium"
	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/memory/debuggermemory"
	"github.com/wdext/wdext/webdriver/wdclient"
	"github.com/wdext/wdext/wire"
)

// inFrames runs fn in the top document and in each frame path below it
// (a path is a list of iframe ids from the top), returning to the top.
func inFrames(t *testing.T, wd selenium.WebDriver, paths [][]string, fn func(where string)) {
	t.Helper()
	for _, path := range paths {
		assert.NilError(t, wd.SwitchFrame(nil))
		where := "top"
		for _, id := range path {
			el, err := wd.FindElement(selenium.ByID, id)
			assert.NilError(t, err, "finding frame %s", id)
			assert.NilError(t, wd.SwitchFrame(el))
			where += "/" + id
		}
		fn(where)
	}
	assert.NilError(t, wd.SwitchFrame(nil))
}

func await(t testing.TB, wd selenium.WebDriver, script string) any {
	t.Helper()
	v, err := wd.ExecuteScriptAsync(`const done = arguments[arguments.length-1];
		Promise.resolve((async () => { `+script+` })()).then(done, (e) => done("ERROR " + e));`, nil)
	assert.NilError(t, err)
	return v
}

// waitLoaded waits until the current window's document has its profiler.
func waitLoaded(t testing.TB, wd selenium.WebDriver) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if v, _ := wd.ExecuteScript(`return document.readyState === "complete" && !!window.probe && !!probe.profiler`, nil); v == true {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("window did not load")
}

// openSecond opens url in a second window from the current one, switches
// to it once its document has its profiler, and returns both handles.
func openSecond(t *testing.T, wd selenium.WebDriver, url string) (first, second string) {
	t.Helper()
	first, err := wd.CurrentWindowHandle()
	assert.NilError(t, err)
	_, err = wd.ExecuteScript(`window.open(arguments[0], "second")`, []any{url})
	assert.NilError(t, err)
	handles, err := wd.WindowHandles()
	assert.NilError(t, err)
	assert.Equal(t, len(handles), 2)
	second = handles[0]
	if second == first {
		second = handles[1]
	}
	assert.NilError(t, wd.SwitchWindow(second))
	waitLoaded(t, wd)
	return first, second
}

func mark(t testing.TB, wd selenium.WebDriver) {
	t.Helper()
	_, err := wd.ExecuteScript(`probe.mark()`, nil)
	assert.NilError(t, err)
}

// Profilers in the top document, a cross-site (out-of-process) iframe, a
// frame nested in it from a third site, and a second window of a fourth
// site: one call gives each exactly one sample.
func TestForceSampleEveryFrameAndWindow(t *testing.T) {
	env := chromiumtest.Start(t, forcesample.Register)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	wd := e2e.Session(t, env.URL, chromiumtest.Capabilities())

	assert.NilError(t, wd.Get(pages.A+"/forcesample/top.html?cross="+pages.B+"&nested="+pages.C))
	await(t, wd, `await window.framesLoaded;`)
	first, second := openSecond(t, wd, pages.D+"/forcesample/frame.html")

	// Let construction-time samples land, then mark everywhere: only
	// samples after the mark count.
	time.Sleep(200 * time.Millisecond)
	mark(t, wd)
	assert.NilError(t, wd.SwitchWindow(first))
	frames := [][]string{{}, {"cross"}, {"cross", "nested"}}
	inFrames(t, wd, frames, func(string) { mark(t, wd) })

	const K = 3
	for i := 0; i < K; i++ {
		assert.NilError(t, wdclient.ForceSample(wd))
	}

	inFrames(t, wd, frames, func(where string) {
		assert.Equal(t, await(t, wd, `return await probe.count();`), float64(K), "samples in %s", where)
	})
	assert.NilError(t, wd.SwitchWindow(second))
	assert.Equal(t, await(t, wd, `return await probe.count();`), float64(K), "samples in the second window")

	// Every profiler is stopped now (their traces are closed): forcing is
	// still fine, and so is a page without profilers.
	assert.NilError(t, wdclient.ForceSample(wd))
	assert.NilError(t, wd.Get("about:blank"))
	assert.NilError(t, wdclient.ForceSample(wd))
}

// A same-origin iframe shares its parent's renderer and isolate.
func TestForceSampleSameOriginIframe(t *testing.T) {
	env := chromiumtest.Start(t, forcesample.Register)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	wd := e2e.Session(t, env.URL, chromiumtest.Capabilities())

	assert.NilError(t, wd.Get(pages.A+"/forcesample/host.html"))
	await(t, wd, `await window.framesLoaded;`)
	time.Sleep(200 * time.Millisecond)
	same := [][]string{{"same"}}
	inFrames(t, wd, same, func(string) { mark(t, wd) })
	const K = 4
	for i := 0; i < K; i++ {
		assert.NilError(t, wdclient.ForceSample(wd))
	}
	inFrames(t, wd, same, func(where string) {
		assert.Equal(t, await(t, wd, `return await probe.count();`), float64(K), "samples in %s", where)
	})
}

// Between calls wdext leaves tracing off: a page busy with timers gains no
// samples from wdext while no force is under way.
func TestForceSampleDisarmsBetweenCalls(t *testing.T) {
	env := chromiumtest.Start(t, forcesample.Register)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	wd := e2e.Session(t, env.URL, chromiumtest.Capabilities())

	assert.NilError(t, wd.Get(pages.A+"/forcesample/frame.html"))
	waitLoaded(t, wd)
	assert.NilError(t, wdclient.ForceSample(wd))
	time.Sleep(100 * time.Millisecond)
	mark(t, wd)
	// 50 timers over 500 ms: each would sample if the category were armed.
	await(t, wd, `for (let i = 0; i < 50; i++) await new Promise((r) => setTimeout(r, 10));`)
	assert.Equal(t, await(t, wd, `return await probe.count();`), float64(0))
}

// A session whose browser is already tracing (chromedriver's performance
// log with trace categories) gets a clear unsupported operation, never a
// silent no-op.
func TestForceSampleTracingConflict(t *testing.T) {
	env := chromiumtest.Start(t, forcesample.Register)
	caps := chromiumtest.Capabilities()
	caps["goog:loggingPrefs"] = map[string]string{"performance": "ALL"}
	caps["goog:chromeOptions"] = map[string]any{"perfLoggingPrefs": map[string]any{"traceCategories": "devtools.timeline"}}
	wd := e2e.Session(t, env.URL, caps)
	assert.NilError(t, wd.Get("about:blank"))
	err := wdclient.ForceSample(wd)
	if err == nil {
		t.Log("forcesample worked while chromedriver traces")
		return
	}
	we, ok := err.(*wire.Error)
	assert.Assert(t, ok, "%T %v", err, err)
	assert.Equal(t, we.Code, wire.UnsupportedOperation)
	assert.Assert(t, strings.Contains(we.Message, "tracing"), we.Message)
	t.Logf("conflict reported as: %v", we)
}

// A session whose driver died gets a W3C error, not a hang.
func TestForceSampleDeadDriver(t *testing.T) {
	env := chromiumtest.Start(t, forcesample.Register)
	wd := e2e.Session(t, env.URL, chromiumtest.Capabilities())
	assert.NilError(t, wdclient.ForceSample(wd))
	env.Driver.Kill()
	err := wdclient.ForceSample(wd)
	we, ok := err.(*wire.Error)
	assert.Assert(t, ok, "%T %v", err, err)
	assert.Equal(t, we.Code, wire.InvalidSessionID)
}

// A client that gives up on a force (or a force that times out) leaves
// the browser's tracing off: the next force works.
func TestForceSampleAbortedLeavesTracingOff(t *testing.T) {
	env := chromiumtest.Start(t, forcesample.Register)
	wd := e2e.Session(t, env.URL, chromiumtest.Capabilities())
	assert.NilError(t, wd.Get("about:blank"))
	c, err := wdclient.For(wd)
	assert.NilError(t, err)
	for _, after := range []time.Duration{time.Millisecond, 4 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), after)
		c.ForceSample(ctx, wd.SessionID())
		cancel()
		// The next force waits for the aborted one's tracing to end.
		assert.NilError(t, wdclient.ForceSample(wd), "after a force aborted at %v", after)
	}
}

// In a stack-samples session (wdext:stackSamples), a page's own
// synchronous console.timeStamp(), here in the listener of a Selenium
// click, samples with its caller on the stack; a force skips a page that
// marked a sample of its own (and clears the mark), and samples one that
// did not; the GC log, which needs the browser's tracing, names the
// session's trace as what holds it.
func TestForceSampleStackSamples(t *testing.T) {
	env := chromiumtest.Start(t, forcesample.Register, debuggermemory.Register)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	caps := chromiumtest.Capabilities()
	caps[wire.StackSamplesCapability] = true
	wd := e2e.Session(t, env.URL, caps)

	assert.NilError(t, wd.Get(pages.A+"/forcesample/stack.html"))
	waitLoaded(t, wd)
	mark(t, wd)
	el, err := wd.FindElement(selenium.ByID, "go")
	assert.NilError(t, err)
	assert.NilError(t, el.Click())
	stacks := await(t, wd, `return await probe.stacks();`).([]any)
	assert.Assert(t, slices.ContainsFunc(stacks, func(s any) bool { return strings.HasPrefix(s.(string), "clickedHere") }),
		"a sample of the click has the listener's function on top: %v", stacks)

	// The force samples the page; with the page's mark, it skips it.
	_, err = wd.ExecuteScript(`probe.start(); probe.mark()`, nil)
	assert.NilError(t, err)
	assert.NilError(t, wdclient.ForceSample(wd))
	_, err = wd.ExecuteScript(`sampledHere(arguments[0])`, []any{wire.SampledHereSymbol})
	assert.NilError(t, err)
	assert.NilError(t, wdclient.ForceSample(wd))
	left, err := wd.ExecuteScript(`return window[Symbol.for(arguments[0])] === undefined`, []any{wire.SampledHereSymbol})
	assert.NilError(t, err)
	assert.Equal(t, left, true, "the force cleared the page's mark")
	stacks = await(t, wd, `return await probe.stacks();`).([]any)
	var forced, own int
	for _, s := range stacks {
		switch {
		case strings.HasPrefix(s.(string), "sampledHere"):
			own++
		case s == "":
			forced++ // the trigger's sample has no frame of the page's scripts
		}
	}
	assert.Equal(t, own, 1, "the page's own sample: %v", stacks)
	assert.Assert(t, forced >= 1, "the first force's sample: %v", stacks)

	_, err = wdclient.CollectGCLog(wd, true)
	var we *wire.Error
	assert.Assert(t, errors.As(err, &we), "%v", err)
	assert.Equal(t, we.Code, wire.UnsupportedOperation)
	assert.Assert(t, strings.Contains(we.Message, wire.StackSamplesCapability), we.Message)
}
