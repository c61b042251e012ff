package wpt_test

import (
	"testing"

	"github.com/tebeka/selenium"
	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/webkitgtk/webkitgtktest"
	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/wpt"
)

// The bundled js-self-profiling suite passes on WebKitGTK through wdext
// (the Profiler polyfill injected into every document, forcesample through
// it), but for what expectations-webkitgtk.json records as beyond a
// polyfill.
func TestBundledSuiteWebKitGTK(t *testing.T) {
	env := webkitgtktest.Start(t, forcesample.Register)
	results, _ := runSuiteAt(t, env.URL, selenium.Capabilities{}, "js-self-profiling", "", false)
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
