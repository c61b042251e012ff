package wpt_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/tebeka/selenium"
	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/wpt"
)

// The bundled js-self-profiling suite passes on WebKitGTK through wdext
// (the Profiler polyfill injected into every document, forcesample through
// it), but for what expectations-webkitgtk.json records as beyond a
// polyfill.
func TestBundledSuiteWebKitGTK(t *testing.T) {
	env := e2e.StartWebKitGTK(t, forcesample.Register)
	root := e2e.Testdata("wpt")
	th, err := wpt.FindTestharness("", root)
	if err != nil {
		if os.Getenv("WDEXT_REQUIRE_BROWSER") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	srv, err := wpt.NewServer(root, wpt.Options{MainHost: "localhost"})
	assert.NilError(t, err)
	ctx := context.Background()
	assert.NilError(t, srv.Start(ctx))
	t.Cleanup(func() { srv.Close() })
	r := &wpt.Runner{WebDriver: env.URL, Server: srv, Testharness: th, Capabilities: selenium.Capabilities{},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	r.Mount()
	tests, err := wpt.Discover(root, []string{"js-self-profiling"})
	assert.NilError(t, err)
	results, err := r.Run(ctx, tests)
	assert.NilError(t, err)
	exp, err := wpt.LoadExpectations(e2e.Testdata("wpt", "expectations-webkitgtk.json"))
	assert.NilError(t, err)
	for _, res := range results {
		t.Logf("%s: %s %s", res.Test, res.Status, res.Message)
		for _, st := range res.Subtests {
			t.Logf("  %q: %s %s", st.Name, st.Status, st.Message)
		}
		for _, u := range exp.Unexpected(res) {
			t.Errorf("unexpected: %s %q: %s (expected %s): %s", u.Test, u.Subtest, u.Status, u.Expected, u.Message)
		}
	}
	assert.Equal(t, len(results), 6)
}
