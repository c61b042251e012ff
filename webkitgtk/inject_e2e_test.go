package webkitgtk_test

import (
	"encoding/json"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/internal/e2e"
)

// The polyfill is in every document loaded over http before the page's
// own scripts run, in cross-site frames too, and standards mode is kept.
func TestInjectAtDocumentStart(t *testing.T) {
	env := e2e.StartWebKitGTK(t)
	pages := e2e.ServePages(t, e2e.Testdata("polyfill"), nil)
	id, r := newSession(t, env.URL, map[string]any{})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	s := env.URL + "/session/" + id
	r = do(t, "POST", s+"/url", map[string]any{"url": pages.A + "/early.html"})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	r = do(t, "POST", s+"/execute/async", map[string]any{"args": []any{}, "script": `const done = arguments[0];
const f = document.getElementById("cross");
f.onload = () => done([window.early, document.compatMode, Object.keys(window).includes("Profiler")]);
f.src = "` + pages.B + `/early.html";`})
	var got []any
	assert.NilError(t, json.Unmarshal(r.Value, &got), "%s", r.Value)
	assert.DeepEqual(t, got, []any{"function", "CSS1Compat", false})
	r = do(t, "POST", s+"/execute/async", map[string]any{"args": []any{}, "script": `window.fetched.then(arguments[0])`})
	var fetched string
	assert.NilError(t, json.Unmarshal(r.Value, &fetched))
	assert.Assert(t, !strings.Contains(fetched, "wdext.profiler"), "a fetched HTML resource got the polyfill: %s", fetched)
	r = do(t, "POST", s+"/frame", map[string]any{"id": 0})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	r = do(t, "POST", s+"/execute/sync", map[string]any{"args": []any{}, "script": `return [window.early, location.origin]`})
	assert.Equal(t, string(r.Value), `["function","`+pages.B+`"]`)
}
