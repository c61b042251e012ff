package wpt_test

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/engine/chromium/forcetrace"
	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/wpt"
)

// The bundled js-self-profiling tests give the same verdict every time:
// WDEXT_WPT_RUNS rounds in a row (default 20; the figure is 200)
// in one session, as `wdext wpt` runs them, with no unexpected result.
// The counting tests (five forces, five samples; the cross-site iframe;
// the full buffer) fail on a single stray or missed sample, so an
// unexpected result is a miscount. It prints the results and what the
// engine read in the traces of the armed windows.
func TestBundledProfilingLoop(t *testing.T) {
	runs := 20
	if v := os.Getenv("WDEXT_WPT_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		assert.NilError(t, err, "WDEXT_WPT_RUNS")
		runs = n
	}
	env := chromiumtest.Start(t, forcesample.Register)
	srv, th := bundledServer(t)
	root, ctx := e2e.Testdata("wpt"), context.Background()
	exp, err := wpt.LoadExpectations(e2e.Testdata("wpt", "expectations.json"))
	assert.NilError(t, err)
	tests, err := wpt.Discover(root, []string{"js-self-profiling"})
	assert.NilError(t, err)
	var all []wpt.Test
	for range runs {
		all = append(all, tests...)
	}

	var mu sync.Mutex
	var forces, strays, unverified int
	var windows []time.Duration
	stop := forcetrace.Observe(t, &env.Driver.Bind, func(r forcetrace.ForceReport) {
		mu.Lock()
		defer mu.Unlock()
		forces++
		strays += len(r.Strays)
		if !r.Verified {
			unverified++
		}
		windows = append(windows, r.Window)
		for _, s := range r.Strays {
			t.Logf("stray sample in a force's window: %s", s)
		}
		if r.Held > time.Second || !r.Verified {
			t.Logf("force %d: held %v (window %v), verified %v, samples %d of %d",
				forces, r.Held, r.Window, r.Verified, r.Samples, r.Isolates)
		}
	})
	defer stop()

	unexpected := 0
	statuses := map[string]int{}
	r := &wpt.Runner{WebDriver: env.URL, Server: srv, Testharness: th,
		Log: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Done: func(res wpt.Result) {
			statuses[string(res.Status)]++
			for _, st := range res.Subtests {
				statuses["subtest "+string(st.Status)]++
			}
			for _, u := range exp.Unexpected(res) {
				unexpected++
				t.Errorf("unexpected: %s %q: %s (expected %s): %s", u.Test, u.Subtest, u.Status, u.Expected, u.Message)
			}
		}}
	r.Mount()
	start := time.Now()
	results, err := r.Run(ctx, all)
	assert.NilError(t, err)
	took := time.Since(start)
	assert.Equal(t, len(results), len(all))

	mu.Lock()
	defer mu.Unlock()
	slices.Sort(windows)
	median := time.Duration(0)
	if len(windows) > 0 {
		median = windows[len(windows)/2]
	}
	t.Logf("%d rounds of %d tests in %v: %d unexpected results (miscounts); results %v", runs, len(tests), took.Round(time.Millisecond), unexpected, statuses)
	t.Logf("engine: %d forces, %d stray samples in their traces, %d traces not read whole, armed window median %v", forces, strays, unverified, median.Round(10*time.Microsecond))
	assert.Equal(t, unexpected, 0)
	assert.Equal(t, strays, 0, "stray samples")
}

// testWriter logs what is written to it in the test's log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}
