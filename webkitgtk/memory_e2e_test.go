package webkitgtk_test

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/memory"
	"github.com/wdext/wdext/memory/debuggermemory"
	"github.com/wdext/wdext/webdriver"
)

// On WebKitGTK every memory command answers "unsupported operation",
// naming what is missing: no silent zeros.
func TestMemoryUnsupported(t *testing.T) {
	env := e2e.StartWebKitGTK(t, memory.Register, debuggermemory.Register)
	pages := e2e.ServePages(t, e2e.Testdata("polyfill"), nil)
	id, r := newSession(t, env.URL, map[string]any{})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	s := env.URL + "/session/" + id
	do(t, "POST", s+"/url", map[string]any{"url": pages.A + "/page.html"})
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/wdext/memory/measure", map[string]any{}},
		{"POST", "/wdext/memory/measure", map[string]any{"source": "api"}},
		{"POST", "/wdext/memory/measure", map[string]any{"source": "engine"}},
		{"POST", "/wdext/memory/gc", map[string]any{}},
		{"POST", "/wdext/memory/census", map[string]any{"breakdown": map[string]any{"by": "count"}}},
		{"POST", "/wdext/memory/allocations", map[string]any{"trackingAllocationSites": true}},
		{"POST", "/wdext/memory/gc-log", map[string]any{"collect": true}},
		{"POST", "/wdext/memory/live-objects/start", map[string]any{}},
	} {
		r := do(t, c.method, s+c.path, c.body)
		assert.Assert(t, r.Err != nil, "%s %s answered %s", c.method, c.path, r.Value)
		assert.Equal(t, r.Err.Code, webdriver.UnsupportedOperation, "%s %s: %v", c.method, c.path, r.Err)
		msg := r.Err.Message
		assert.Assert(t, strings.Contains(msg, "CDP") && strings.Contains(msg, "MiniBrowser"), "%s %s: %s", c.method, c.path, msg)
		t.Logf("%s %s: %s", c.method, c.path, msg)
	}
	// Reading what was never started is a state error, still no zeros.
	for _, c := range []struct{ method, path string }{
		{"POST", "/wdext/memory/allocations/drain"},
		{"POST", "/wdext/memory/live-objects/stop"},
	} {
		var body any
		if c.method == "POST" {
			body = map[string]any{}
		}
		r := do(t, c.method, s+c.path, body)
		assert.Assert(t, r.Err != nil, "%s %s answered %s", c.method, c.path, r.Value)
		t.Logf("%s %s: %v", c.method, c.path, r.Err)
	}
	// The GC log says truthfully that it is not collecting (starting it
	// was unsupported above).
	r = do(t, "GET", s+"/wdext/memory/gc-log", nil)
	assert.Equal(t, string(r.Value), `{"collecting":false,"entries":[],"dataLossOccurred":false}`)
}
