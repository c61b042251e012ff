package memory_test

import (
	"slices"
	"testing"
	"time"

	"github.com/tebeka/selenium"
	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/memory"
	"github.com/wdext/wdext/webdriver/wdclient"
	"github.com/wdext/wdext/wire"
)

// unaidedCap bounds the wait for the page's own, unhelped call.
const unaidedCap = 40 * time.Second

// selfMeasure makes the page call performance.measureUserAgentSpecificMemory()
// itself and returns how long it took to settle, or -1 past unaidedCap.
func selfMeasure(b *testing.B, wd selenium.WebDriver) time.Duration {
	b.Helper()
	assert.NilError(b, wd.SetAsyncScriptTimeout(unaidedCap+10*time.Second))
	v, err := wd.ExecuteScriptAsync(`const [capMs, done] = arguments;
		const t0 = performance.now();
		const cap = new Promise((r) => setTimeout(() => r(-1), capMs));
		Promise.race([performance.measureUserAgentSpecificMemory().then(() => performance.now() - t0), cap])
			.then(done, (e) => done("ERROR " + e));`, []any{unaidedCap.Milliseconds()})
	assert.NilError(b, err)
	ms, ok := v.(float64)
	assert.Assert(b, ok, "page: %v", v)
	if ms < 0 {
		return -1
	}
	return time.Duration(ms * float64(time.Millisecond))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkMeasureMemory prints, from one run on a cross-origin-isolated
// page with a same-origin iframe, a cross-site (out-of-process) iframe and
// a dedicated worker:
//
//   - unaided-ms: the page calling performance.measureUserAgentSpecificMemory()
//     itself, once, before wdext touches it (-1: not settled within 40 s);
//   - api-*-ms: POST …/wdext/memory/measure {"source":"api"}, client to
//     result, over the iterations;
//   - engine-*-ms: the same with {"source":"engine"}.
//
// Run it with
//
//	go test ./memory -run XXX -bench MeasureMemory -benchtime 20x
func BenchmarkMeasureMemory(b *testing.B) {
	env := chromiumtest.Start(b, memory.Register)
	pages := e2e.ServePages(b, e2e.Testdata(), nil)
	wd := e2e.Session(b, env.URL, chromiumtest.Capabilities())
	load(b, wd, pages, page(pages, true))

	unaided := selfMeasure(b, wd)

	var api, engine []time.Duration
	for b.Loop() {
		for _, source := range []string{wire.SourceAPI, wire.SourceEngine} {
			t0 := time.Now()
			m, err := wdclient.MeasureMemory(wd, wdclient.MeasureOptions{Source: source})
			d := time.Since(t0)
			if err != nil {
				b.Fatalf("source %s: %v", source, err)
			}
			if m.Bytes < 50<<20 {
				b.Fatalf("source %s: %d bytes, less than the worker's 50 MiB", source, m.Bytes)
			}
			if source == wire.SourceAPI {
				api = append(api, d)
			} else {
				engine = append(engine, d)
			}
		}
	}
	b.ReportMetric(ms(unaided), "unaided-ms")
	b.ReportMetric(ms(e2e.Median(api)), "api-median-ms")
	b.ReportMetric(ms(slices.Max(api)), "api-max-ms")
	b.ReportMetric(ms(e2e.Median(engine)), "engine-median-ms")
	b.ReportMetric(ms(slices.Max(engine)), "engine-max-ms")
	b.Logf("unaided page call %v; through wdext over %d calls: api median %v (max %v), engine median %v (max %v)",
		unaided, len(api), e2e.Median(api), slices.Max(api), e2e.Median(engine), slices.Max(engine))
}

// BenchmarkMeasureMemoryEagerFlag is the alternative wdext did not take:
// a browser started with --enable-blink-features=ForceEagerMeasureMemory,
// where the page's own call settles without forced collections.
//
//	go test ./memory -run XXX -bench EagerFlag -benchtime 20x
func BenchmarkMeasureMemoryEagerFlag(b *testing.B) {
	env := chromiumtest.Start(b, memory.Register)
	pages := e2e.ServePages(b, e2e.Testdata(), nil)
	caps := chromiumtest.Capabilities()
	caps["goog:chromeOptions"] = map[string]any{"args": []any{"--enable-blink-features=ForceEagerMeasureMemory"}}
	wd := e2e.Session(b, env.URL, caps)
	load(b, wd, pages, page(pages, true))

	var eager []time.Duration
	for b.Loop() {
		d := selfMeasure(b, wd)
		if d < 0 {
			b.Fatalf("not settled within %v", unaidedCap)
		}
		eager = append(eager, d)
	}
	b.ReportMetric(ms(e2e.Median(eager)), "eager-median-ms")
	b.ReportMetric(ms(slices.Max(eager)), "eager-max-ms")
}
