package wpt_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/wpt"
)

// A page that hangs is a TIMEOUT, a test that never settles is the
// harness's own TIMEOUT, and the run goes on: the next test passes, with a
// testdriver action.
func TestRunnerCopesWithBadPages(t *testing.T) {
	env := chromiumtest.Start(t)
	root := e2e.Testdata("wpt-runner")
	th, err := wpt.FindTestharness("", root)
	if err != nil {
		t.Skip(err)
	}
	srv, err := wpt.NewServer(root, wpt.Options{MainHost: "localhost"})
	assert.NilError(t, err)
	assert.NilError(t, srv.Start(context.Background()))
	t.Cleanup(func() { srv.Close() })
	r := &wpt.Runner{WebDriver: env.URL, Server: srv, Testharness: th, TimeoutMultiplier: 0.2,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	r.Mount()
	var tests []wpt.Test
	for _, name := range []string{"/hangs.html", "/times-out.html", "/passes.html"} {
		tests = append(tests, wpt.Test{URL: name, File: name[1:]})
	}
	results, err := r.Run(context.Background(), tests)
	assert.NilError(t, err)
	assert.Equal(t, len(results), 3)
	status := map[string]wpt.Status{}
	for _, res := range results {
		status[res.Test] = res.Status
		t.Logf("%s: %s %q %v", res.Test, res.Status, res.Message, res.Subtests)
	}
	assert.Equal(t, status["/hangs.html"], wpt.StatusTimeout)
	assert.Equal(t, status["/times-out.html"], wpt.StatusTimeout)
	assert.Equal(t, status["/passes.html"], wpt.StatusOK)
	assert.Equal(t, results[2].Subtests[0].Status, wpt.StatusPass)
}
