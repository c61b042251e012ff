package forcesample_test

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/webdriver/wdclient"
)

// BenchmarkForceSampleFreshRenderer measures forces that each meet a
// renderer made for them: before every force the window navigates to the
// other of two sites, so the page is in a new process (its documents are
// not kept: no-store). Every count must be exactly one. It runs idle and
// beside two CPU hogs of its own, and reports the median and p99 against
// the targets (25 and 40 ms) and the slowest force against 1 s:
//
//	go test ./forcesample -run XXX -bench ForceSampleFreshRenderer -benchtime 1000x -timeout 60m
func BenchmarkForceSampleFreshRenderer(b *testing.B) {
	for _, hogs := range []int{0, 2} {
		b.Run(map[int]string{0: "idle", 2: "two-hogs"}[hogs], func(b *testing.B) {
			defer hog(b, hogs)()
			lat, wrong := freshForces(b)
			slices.Sort(lat)
			p50, p99, worst := lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
			b.ReportMetric(float64(p50.Microseconds())/1000, "median-ms")
			b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(worst.Microseconds())/1000, "max-ms")
			b.ReportMetric(float64(p50)/float64(25*time.Millisecond), "median/target")
			b.ReportMetric(float64(p99)/float64(40*time.Millisecond), "p99/target")
			b.ReportMetric(float64(worst)/float64(time.Second), "max/1s")
			b.ReportMetric(float64(wrong), "wrong-counts")
		})
	}
}

// freshForces navigates and forces b.N times, and returns the forces'
// latencies and how many counts were not one.
func freshForces(b *testing.B) ([]time.Duration, int) {
	env := chromiumtest.Start(b, forcesample.Register)
	pages := e2e.ServePages(b, e2e.Testdata(), nil)
	wd := e2e.Session(b, env.URL, chromiumtest.Capabilities())
	c, err := wdclient.For(wd)
	assert.NilError(b, err)
	sites := []string{pages.A, pages.C}
	lat := make([]time.Duration, 0, b.N)
	wrong := 0
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		assert.NilError(b, wd.Get(sites[i%2]+"/forcesample/frame.html"))
		waitLoaded(b, wd)
		mark(b, wd)
		b.StartTimer()
		t0 := time.Now()
		if err := c.ForceSample(context.Background(), wd.SessionID()); err != nil {
			b.Fatalf("force %d: %v", i, err)
		}
		lat = append(lat, time.Since(t0))
		b.StopTimer()
		if n := await(b, wd, `return await probe.count();`); n != float64(1) {
			wrong++
			b.Logf("force %d: %v samples", i, n)
		}
	}
	return lat, wrong
}

// hog keeps n shell loops spinning, each a process of its own (goroutines
// would starve the in-process wdext of the Go scheduler's threads), until
// the returned stop kills them.
func hog(b *testing.B, n int) (stop func()) {
	var cmds []*exec.Cmd
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		assert.NilError(b, cmd.Start())
		cmds = append(cmds, cmd)
	}
	return func() {
		for _, cmd := range cmds {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}
}
