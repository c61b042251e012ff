package wpt_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/tebeka/selenium"
	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/engine/kind"
	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/wpt"
)

// runSuite runs the bundled suite (or a directory of it) through wdext in
// front of real Chromium; vendor, if set, replaces testdriver-vendor.js.
func runSuite(t testing.TB, dir string, vendor string) ([]wpt.Result, time.Duration) {
	env := chromiumtest.Start(t, forcesample.Register)
	return runSuiteAt(t, env.URL, nil, dir, vendor, false)
}

// runSuiteAt runs it through the wdext at webDriver, with sessions of caps
// (nil: Chromium's, as wdext wpt asks for them; empty: the runner's
// default), in stack-samples sessions if stackSamples.
func runSuiteAt(t testing.TB, webDriver string, caps selenium.Capabilities, dir string, vendor string, stackSamples bool) ([]wpt.Result, time.Duration) {
	srv, th := bundledServer(t)
	if caps == nil {
		caps = chromium.WPTCapabilities(kind.Served{Hosts: srv.WPTHosts(), SPKIHash: srv.SPKIHash()})
	}
	ctx := context.Background()
	r := &wpt.Runner{
		WebDriver: webDriver, Server: srv, Testharness: th, Capabilities: caps, StackSamples: stackSamples,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	r.Mount()
	if vendor != "" {
		srv.Mount("/resources/testdriver-vendor.js", wpt.Static("text/javascript", []byte(vendor)))
	}
	var paths []string
	if dir != "" {
		paths = []string{dir}
	}
	tests, err := wpt.Discover(e2e.Testdata("wpt"), paths)
	assert.NilError(t, err)
	start := time.Now()
	results, err := r.Run(ctx, tests)
	assert.NilError(t, err)
	return results, time.Since(start)
}

// The bundled suite passes on Chromium through wdext, but for what
// expectations.json records as Chromium's own failures.
func TestBundledSuite(t *testing.T) {
	results, took := runSuite(t, "", "")
	exp, err := wpt.LoadExpectations(e2e.Testdata("wpt", "expectations.json"))
	assert.NilError(t, err)
	for _, r := range results {
		for _, u := range exp.Unexpected(r) {
			t.Errorf("unexpected: %s %q: %s (expected %s): %s", u.Test, u.Subtest, u.Status, u.Expected, u.Message)
		}
	}
	assert.Assert(t, len(results) >= 8)
	t.Logf("bundled suite: %d tests in %v", len(results), took)
}

// In stack-samples sessions (wdext wpt --stack-samples) Chromium passes
// sync-force-sample.html (RFC 81: the caller on the forced sample's
// stack), and the rest is as expectations-chrome-stack-samples.json says.
func TestBundledSuiteStackSamples(t *testing.T) {
	env := chromiumtest.Start(t, forcesample.Register)
	results, _ := runSuiteAt(t, env.URL, nil, "js-self-profiling", "", true)
	exp, err := wpt.LoadExpectations(e2e.Testdata("wpt", "expectations-chrome-stack-samples.json"))
	assert.NilError(t, err)
	passed := false
	for _, r := range results {
		for _, u := range exp.Unexpected(r) {
			t.Errorf("unexpected: %s %q: %s (expected %s): %s", u.Test, u.Subtest, u.Status, u.Expected, u.Message)
		}
		if r.Test == "/js-self-profiling/sync-force-sample.html" {
			passed = len(r.Subtests) == 1 && r.Subtests[0].Status == wpt.StatusPass
		}
	}
	assert.Assert(t, passed, "sync-force-sample.html passes")
}

// busyWait is WPT's way to get a sample without force_sample: spin 10 ms,
// then wait 500 ms for the profiler to tick.
const busyWait = `test_driver.force_sample = async () => {
  const end = performance.now() + 10;
  while (performance.now() < end);
  await new Promise((resolve) => setTimeout(resolve, 500));
};`

// BenchmarkProfilingSuite times the bundled js-self-profiling tests with
// test_driver.force_sample() and with WPT's busy-wait helper in its place
// (results of the latter are not checked: its samples are not exact).
//
//	go test ./wpt -run XXX -bench ProfilingSuite -benchtime 1x
func BenchmarkProfilingSuite(b *testing.B) {
	var force, busy time.Duration
	for i := 0; i < b.N; i++ {
		_, f := runSuite(b, "js-self-profiling", "")
		_, w := runSuite(b, "js-self-profiling", busyWait)
		force, busy = force+f, busy+w
	}
	b.ReportMetric(force.Seconds()/float64(b.N), "force-sample-s")
	b.ReportMetric(busy.Seconds()/float64(b.N), "busy-wait-s")
	b.ReportMetric(busy.Seconds()/force.Seconds(), "speedup")
}

// bundledServer serves the bundled suite (testdata/wpt) as the runner's
// tests do until the test ends, with the testharness.js to serve.
func bundledServer(t testing.TB) (*wpt.Server, []byte) {
	t.Helper()
	return e2e.WPTServer(t, e2e.Testdata("wpt"))
}
