package forcesample_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/tebeka/selenium"
	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/engine/webkitgtk/webkitgtktest"
	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/webdriver/wdclient"
	"github.com/wdext/wdext/wire"
)

// BenchmarkForceSample measures the forcesample round trip through wdext
// on a page with a cross-site iframe (itself nesting a third site) and a
// second window, and counts missed samples in every profiler; it
// reports the median against the 20 ms target (median/target, at most 1
// meets it):
//
//	go test ./forcesample -run XXX -bench ForceSample -benchtime 1000x
func BenchmarkForceSample(b *testing.B) {
	benchSettled(b, true)
}

// BenchmarkForceSampleStackSamples is BenchmarkForceSample in a
// stack-samples session (wdext:stackSamples): no pause and no arming per
// call, and counts that may exceed the calls (every callback samples).
//
//	go test ./forcesample -run XXX -bench ForceSampleStackSamples -benchtime 1000x
func BenchmarkForceSampleStackSamples(b *testing.B) {
	caps := chromiumtest.Capabilities()
	caps[wire.StackSamplesCapability] = true
	lat, counts := benchForces(b, caps, true)
	missed, extra := 0, 0
	for _, n := range counts {
		missed += max(b.N-n, 0)
		extra += max(n-b.N, 0)
	}
	reportLatency(b, lat)
	b.ReportMetric(float64(missed), "missed-samples")
	b.ReportMetric(float64(extra), "extra-samples")
}

// BenchmarkForceSampleOneWindow is BenchmarkForceSample without the
// second window: a force that arms once (one page and its frames).
//
//	go test ./forcesample -run XXX -bench ForceSampleOneWindow -benchtime 1000x
func BenchmarkForceSampleOneWindow(b *testing.B) {
	benchSettled(b, false)
}

// benchSettled reports the latencies and the missed samples of b.N forces
// on the benchmark's page, with its second window if second.
func benchSettled(b *testing.B, second bool) {
	lat, counts := benchForces(b, chromiumtest.Capabilities(), second)
	missed := 0
	for _, n := range counts {
		missed += b.N - n
	}
	reportLatency(b, lat)
	b.ReportMetric(float64(missed), "missed-samples")
}

// benchForces sends b.N forces on the benchmark's page (with a second
// window if second), in a session of caps, and returns their latencies
// and each profiler's count of samples.
func benchForces(b *testing.B, caps selenium.Capabilities, second bool) ([]time.Duration, []int) {
	env := chromiumtest.Start(b, forcesample.Register)
	pages := e2e.ServePages(b, e2e.Testdata(), nil)
	wd := e2e.Session(b, env.URL, caps)
	opts := fmt.Sprintf("&interval=%d&buffer=%d", 600_000, b.N+100)
	assert.NilError(b, wd.Get(pages.A+"/forcesample/top.html?cross="+pages.B+"&nested="+pages.C+opts))
	_, err := wd.ExecuteScriptAsync(`window.framesLoaded.then(arguments[arguments.length-1])`, nil)
	assert.NilError(b, err)
	first, _ := wd.CurrentWindowHandle()
	if second {
		_, err = wd.ExecuteScript(`window.open(arguments[0], "second")`, []any{pages.D + "/forcesample/frame.html?" + opts[1:]})
		assert.NilError(b, err)
	}
	time.Sleep(500 * time.Millisecond)
	handles, _ := wd.WindowHandles()
	frames := [][]string{{}, {"cross"}, {"cross", "nested"}}
	markAll := func() {
		for _, h := range handles {
			assert.NilError(b, wd.SwitchWindow(h))
			if h == first {
				for _, path := range frames {
					assert.NilError(b, wd.SwitchFrame(nil))
					for _, id := range path {
						el, err := wd.FindElement("id", id)
						assert.NilError(b, err)
						assert.NilError(b, wd.SwitchFrame(el))
					}
					_, err := wd.ExecuteScript(`probe.mark()`, nil)
					assert.NilError(b, err)
				}
				continue
			}
			_, err := wd.ExecuteScript(`probe.mark()`, nil)
			assert.NilError(b, err)
		}
	}
	markAll()

	c, err := wdclient.For(wd)
	assert.NilError(b, err)
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := c.ForceSample(ctx, wd.SessionID()); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()

	var counts []int
	for _, h := range handles {
		assert.NilError(b, wd.SwitchWindow(h))
		paths := [][]string{{}}
		if h == first {
			paths = frames
		}
		for _, path := range paths {
			assert.NilError(b, wd.SwitchFrame(nil))
			for _, id := range path {
				el, _ := wd.FindElement("id", id)
				assert.NilError(b, wd.SwitchFrame(el))
			}
			v, err := wd.ExecuteScriptAsync(`const done = arguments[0]; probe.count().then(done, (e) => done(String(e)))`, nil)
			assert.NilError(b, err)
			n, _ := v.(float64)
			counts = append(counts, int(n))
			if int(n) != b.N {
				b.Logf("window %s frame %v: %v samples for %d calls", h, path, v, b.N)
			}
		}
	}
	return lat, counts
}

// medianTarget is the forcesample command's target (issue 18): a median
// of at most 20 ms, on Chromium as through WebKitGTK's inspector.
const medianTarget = 20 * time.Millisecond

// reportLatency reports the calls' median and p99, and the median as a
// multiple of medianTarget (at most 1 meets it).
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	median, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	ratio := float64(median) / float64(medianTarget)
	b.ReportMetric(float64(median.Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(ratio, "median/target")
	if b.N > 1 { // not the testing package's first, one-call run
		b.Logf("%d calls: median %v, p99 %v; median/target %.2f (target: a median of at most %v)",
			len(lat), median.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), ratio, medianTarget)
	}
}

// BenchmarkForceSampleWebKitGTK measures the forcesample round trip on
// WebKitGTK, through the inspector (what the command does) and by the
// WebDriver walk, on the same page with a cross-site iframe nesting a
// third site, and a second window; each against the 20 ms target
// (median/target):
//
//	go test ./forcesample -run XXX -bench ForceSampleWebKitGTK -benchtime 200x
func BenchmarkForceSampleWebKitGTK(b *testing.B) {
	env := webkitgtktest.Start(b, forcesample.Register, registerWalk)
	pages := e2e.ServePages(b, e2e.Testdata(), nil)
	c := e2e.NewRawSession(b, env.URL, map[string]any{})
	c.Call("POST", "/url", map[string]any{"url": pages.A + "/forcesample/top.html?cross=" + pages.B + "&nested=" + pages.C}, nil)
	wkAwait(c, `await window.framesLoaded;`)
	var nw struct{ Handle string }
	c.Call("POST", "/window/new", map[string]any{"type": "window"}, &nw)
	c.Call("POST", "/window", map[string]any{"handle": nw.Handle}, nil)
	c.Call("POST", "/url", map[string]any{"url": pages.D + "/forcesample/frame.html"}, nil)
	for _, force := range []string{"/forcesample", "/wdext-test/walk"} {
		b.Run(strings.TrimPrefix(force, "/"), func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for range b.N {
				t0 := time.Now()
				c.Call("POST", force, map[string]any{}, nil)
				lat = append(lat, time.Since(t0))
			}
			reportLatency(b, lat)
		})
	}
}
