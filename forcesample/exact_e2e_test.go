package forcesample_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/engine/chromium/forcetrace"
	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/webdriver/wdclient"
)

// envInt is the integer in the environment variable name, or def.
func envInt(t testing.TB, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: not a positive integer", name, v)
	}
	return n
}

// forceStats gathers what the trace of every force's armed window shows
// (package forcetrace reads it) while a test runs.
type forceStats struct {
	mu              sync.Mutex
	forces, samples int
	strays          int
	unverified      int
	windows, held   []time.Duration
	strayNames      map[string]int
}

// observeForces gathers the forces of the sessions env makes from now on.
func observeForces(t testing.TB, env *chromiumtest.Env) *forceStats {
	st := &forceStats{strayNames: map[string]int{}}
	stop := forcetrace.Observe(t, &env.Driver.Bind, func(r forcetrace.ForceReport) {
		st.mu.Lock()
		defer st.mu.Unlock()
		st.forces++
		if !r.Verified {
			st.unverified++
		}
		st.samples += r.Samples
		st.strays += len(r.Strays)
		for _, s := range r.Strays {
			st.strayNames[s]++
		}
		st.windows = append(st.windows, r.Window)
		st.held = append(st.held, r.Held)
	})
	t.Cleanup(stop)
	return st
}

func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*q)]
}

func (st *forceStats) String() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return fmt.Sprintf("%d forces, %d triggers in the traces, %d stray samples in them %v, %d traces not read whole; "+
		"armed window median %v p99 %v, isolates paused median %v p99 %v",
		st.forces, st.samples, st.strays, st.strayNames, st.unverified,
		quantile(st.windows, 0.5).Round(10*time.Microsecond), quantile(st.windows, 0.99).Round(10*time.Microsecond),
		quantile(st.held, 0.5).Round(10*time.Microsecond), quantile(st.held, 0.99).Round(10*time.Microsecond))
}

// busyScript keeps a document's main thread busy with what samples when
// Blink's timeline tracing is on: 50 timers re-arming themselves and
// rewriting the DOM (style, layout, paint), an animation frame loop, a
// message channel ping-pong, and a CSS animation watched by a
// ResizeObserver.
const busyScript = `
	window.busy = {timers: 0, frames: 0, messages: 0, resizes: 0, stop: false};
	const out = document.createElement("div");
	document.body.appendChild(out);
	for (let i = 0; i < 50; i++) (function tick() {
		if (busy.stop) return;
		busy.timers++;
		out.textContent = "tick " + busy.timers;
		setTimeout(tick, i % 7);
	})();
	(function frame() { if (!busy.stop) { busy.frames++; requestAnimationFrame(frame); } })();
	const ch = new MessageChannel();
	ch.port1.onmessage = () => { busy.messages++; if (!busy.stop) setTimeout(() => ch.port2.postMessage(0), 1); };
	ch.port2.postMessage(0);
	const style = document.createElement("style");
	style.textContent = "@keyframes grow { from { width: 10px } to { width: 300px } } #grower { height: 5px; background: red; animation: grow 0.3s infinite alternate }";
	document.head.appendChild(style);
	const grower = document.createElement("div");
	grower.id = "grower";
	document.body.appendChild(grower);
	new ResizeObserver(() => busy.resizes++).observe(grower);
`

// Every call takes exactly one sample in every profiler, 1,000 calls out
// of 1,000, however busy the pages are and whatever the client keeps
// under way: the profilers are in a page whose top document runs 50
// timers, an animation frame loop, message handlers and a resizing
// animation, in its cross-site iframe and the frame nested in that, and
// in a second window of a fourth site where the client keeps an
// execute/async script waiting (it polls the server) for the whole run.
// WDEXT_FORCESAMPLE_CALLS sets the number of calls (default 100).
func TestForceSampleExact(t *testing.T) {
	n := envInt(t, "WDEXT_FORCESAMPLE_CALLS", 100)
	release := make(chan struct{})
	var releaseOnce sync.Once
	releaseAll := func() { releaseOnce.Do(func() { close(release) }) }
	env := chromiumtest.Start(t, forcesample.Register)
	st := observeForces(t, env) // the session's forces: those of the loop below
	pages := e2e.ServePages(t, e2e.Testdata(), map[string]http.Handler{
		// Answers once the test releases the script (a long poll: a
		// polling loop would get optimized by V8, and deoptimized when
		// its answer changes, and V8's profiler samples every
		// deoptimization).
		"/wdext-test/release": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}),
	})
	wd := e2e.Session(t, env.URL, chromiumtest.Capabilities())
	// Before the session's end, which chromedriver answers only once the
	// outstanding script below has (cleanups run last first).
	t.Cleanup(releaseAll)
	opts := fmt.Sprintf("interval=%d&buffer=%d", 600_000, n+100)

	assert.NilError(t, wd.Get(pages.A+"/forcesample/top.html?cross="+pages.B+"&nested="+pages.C+"&"+opts))
	await(t, wd, `await window.framesLoaded;`)
	first, second := openSecond(t, wd, pages.D+"/forcesample/frame.html?"+opts)

	assert.NilError(t, wd.SwitchWindow(first))
	_, err := wd.ExecuteScript(busyScript, nil)
	assert.NilError(t, err)
	time.Sleep(300 * time.Millisecond) // construction-time samples land before the marks
	frames := [][]string{{}, {"cross"}, {"cross", "nested"}}
	inFrames(t, wd, frames, func(string) { mark(t, wd) })
	assert.NilError(t, wd.SwitchWindow(second))
	mark(t, wd)

	// The outstanding execute/async, in the second window: it waits for
	// the server to answer.
	assert.NilError(t, wd.SetAsyncScriptTimeout(10*time.Minute))
	asyncDone := make(chan error, 1)
	go func() { // ends once the server releases the script, below
		v, err := wd.ExecuteScriptAsync(`const done = arguments[arguments.length - 1];
			fetch("/wdext-test/release", {cache: "no-store"}).then(() => done("released"), (e) => done(String(e)));`, nil)
		if err == nil && v != "released" {
			err = fmt.Errorf("the script answered %v", v)
		}
		asyncDone <- err
	}()
	time.Sleep(200 * time.Millisecond)

	c, err := wdclient.For(wd)
	assert.NilError(t, err)
	lat := make([]time.Duration, 0, n)
	start := time.Now()
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if err := c.ForceSample(context.Background(), wd.SessionID()); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		lat = append(lat, time.Since(t0))
	}
	took := time.Since(start)
	select {
	case err := <-asyncDone:
		t.Fatalf("the outstanding script ended during the run: %v", err)
	default:
	}
	releaseAll()
	assert.NilError(t, <-asyncDone)

	// Count before the busy page stops: its timers taking the stop branch
	// would deoptimize them, and V8's profiler samples deoptimizations.
	counts := map[string]any{}
	counts["second window"] = await(t, wd, `return await probe.count();`)
	assert.NilError(t, wd.SwitchWindow(first))
	inFrames(t, wd, frames, func(where string) {
		counts[where] = await(t, wd, `return await probe.count();`)
	})
	busy, err := wd.ExecuteScript(`busy.stop = true; return busy`, nil)
	assert.NilError(t, err)
	t.Logf("%d calls in %v (median %v, p99 %v); samples per profiler: %v; the busy page ran %v",
		n, took.Round(time.Millisecond), quantile(lat, 0.5).Round(10*time.Microsecond), quantile(lat, 0.99).Round(10*time.Microsecond), counts, busy)
	t.Logf("engine: %v", st)
	miscounts := 0
	for where, v := range counts {
		if v != float64(n) {
			miscounts++
			t.Errorf("%s: %v samples for %d calls", where, v, n)
		}
	}
	t.Logf("miscounts: %d of %d profilers", miscounts, len(counts))
	assert.Equal(t, st.strays, 0)
}

// The second window shares the first's renderer (same site): pausing the
// isolate pauses every page of the process, so the timers of a busy
// window next to the sampled one take no sample either.
func TestForceSampleExactSameProcess(t *testing.T) {
	n := envInt(t, "WDEXT_FORCESAMPLE_CALLS", 100) / 2
	env := chromiumtest.Start(t, forcesample.Register)
	st := observeForces(t, env) // the session's forces: those of the loop below
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	wd := e2e.Session(t, env.URL, chromiumtest.Capabilities())
	opts := fmt.Sprintf("?interval=%d&buffer=%d", 600_000, n+100)
	assert.NilError(t, wd.Get(pages.A+"/forcesample/frame.html"+opts))
	waitLoaded(t, wd)
	first, _ := wd.CurrentWindowHandle()
	_, err := wd.ExecuteScript(`window.open(arguments[0], "busy")`, []any{pages.A + "/forcesample/"}) // a listing: no profiler
	assert.NilError(t, err)
	handles, _ := wd.WindowHandles()
	for _, h := range handles {
		if h != first {
			assert.NilError(t, wd.SwitchWindow(h))
		}
	}
	_, err = wd.ExecuteScript(busyScript, nil)
	assert.NilError(t, err)
	assert.NilError(t, wd.SwitchWindow(first))
	time.Sleep(300 * time.Millisecond)
	mark(t, wd)
	for i := 0; i < n; i++ {
		assert.NilError(t, wdclient.ForceSample(wd), "call %d", i+1)
	}
	got := await(t, wd, `return await probe.count();`)
	t.Logf("%v samples for %d calls; engine: %v", got, n, st)
	assert.Equal(t, got, float64(n))
	assert.Equal(t, st.strays, 0)
}

// A document that replaces another in the same renderer (the page
// navigates itself, so Chromium keeps the process and its V8 isolate)
// gets exactly one sample per call from its first force on, like a
// document in a new process, provided the document before it stopped its
// profiler: in Chromium 156 a profiler left running by a document that
// navigated away leaves later profilers of the isolate without any
// sample, not even the one at construction (measured; see
// engine/chromium's package doc).
func TestForceSampleAfterSameProcessNavigation(t *testing.T) {
	env := chromiumtest.Start(t, forcesample.Register)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	wd := e2e.Session(t, env.URL, chromiumtest.Capabilities())
	assert.NilError(t, wd.Get(pages.A+"/forcesample/frame.html?n=0"))
	waitLoaded(t, wd)
	c, err := wdclient.For(wd)
	assert.NilError(t, err)
	assert.NilError(t, c.ForceSample(context.Background(), wd.SessionID()))
	for i := 1; i <= 10; i++ {
		_, err := wd.ExecuteScript(`probe.profiler.stop(); location.href = arguments[0]`,
			[]any{fmt.Sprintf("%s/forcesample/frame.html?n=%d", pages.A, i)})
		assert.NilError(t, err)
		for j := 0; ; j++ {
			if v, _ := wd.ExecuteScript(`return location.search`, nil); v == fmt.Sprintf("?n=%d", i) {
				break
			}
			assert.Assert(t, j < 200, "navigation %d did not happen", i)
			time.Sleep(25 * time.Millisecond)
		}
		waitLoaded(t, wd)
		time.Sleep(50 * time.Millisecond) // construction-time samples land before the mark
		mark(t, wd)
		for range 2 {
			assert.NilError(t, c.ForceSample(context.Background(), wd.SessionID()), "navigation %d", i)
		}
		assert.Check(t, is.Equal(await(t, wd, `return await probe.count();`), float64(2)), "navigation %d", i)
	}
}
