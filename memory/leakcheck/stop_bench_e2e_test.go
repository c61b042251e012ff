package leakcheck_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/memory/leakcheck"
	"github.com/wdext/wdext/webdriver/wdclient"
	"github.com/wdext/wdext/wire"
)

// BenchmarkLeakStop prints, from one run on leaky.html with 200,000 more
// objects in the page's state (a heap of about 25 MB):
//
//   - stop-ms: POST …/leaks/stop after five rounds, client to verdict;
//   - snapshot-ms: Chromium's own snapshot of the same heap after the
//     same five rounds, on a fresh load of the page (collected before the
//     rounds, as leaks/start collects): HeapProfiler.takeHeapSnapshot
//     through chromedriver's goog/cdp/execute (collect, write, send),
//     what any client of the browser spends to see its final heap. Each
//     snapshot thus meets the garbage of five rounds, as the stop's does;
//     one taken right after the stop would meet none;
//   - stop/snapshot: the ratio of their medians.
//
// Run it with
//
//	go test ./memory/leakcheck -run XXX -bench LeakStop -benchtime 10x
func BenchmarkLeakStop(b *testing.B) {
	env := chromiumtest.Start(b, leakcheck.Register)
	pages := e2e.ServePages(b, e2e.Testdata(), nil)
	wd := e2e.Session(b, env.URL, nil)
	cdp := func(cmd string) {
		err := wire.Call(context.Background(), http.DefaultClient, "POST", env.URL+"/session/"+wd.SessionID()+"/goog/cdp/execute",
			map[string]any{"cmd": cmd, "params": map[string]any{}}, nil)
		assert.NilError(b, err)
	}
	load := func() {
		assert.NilError(b, wd.Get(pages.A+"/leaks/leaky.html"))
		_, err := wd.ExecuteScript(`window.bulk = Array.from({length: 200000}, (_, i) => ({i, s: "x" + i}))`, nil)
		assert.NilError(b, err)
	}
	rounds := func() {
		for range iterations {
			_, err := wd.ExecuteScript("round()", nil)
			assert.NilError(b, err)
		}
	}
	var stops, snaps []time.Duration
	for b.Loop() {
		load()
		cdp("HeapProfiler.collectGarbage")
		rounds()
		t0 := time.Now()
		cdp("HeapProfiler.takeHeapSnapshot")
		snaps = append(snaps, time.Since(t0))

		load()
		assert.NilError(b, wdclient.LeakStart(wd))
		rounds()
		t0 = time.Now()
		r, err := wdclient.LeakStop(wd, iterations)
		stops = append(stops, time.Since(t0))
		assert.NilError(b, err)
		assert.Equal(b, len(r.Leaks), 4, "%+v", r.Leaks)
	}
	stop, snap := e2e.Median(stops), e2e.Median(snaps)
	b.ReportMetric(float64(stop.Microseconds())/1000, "stop-ms")
	b.ReportMetric(float64(snap.Microseconds())/1000, "snapshot-ms")
	b.ReportMetric(float64(stop)/float64(snap), "stop/snapshot")
}
