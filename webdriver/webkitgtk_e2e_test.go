package webdriver_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/webkitgtk"
	"github.com/wdext/wdext/engine/webkitgtk/webkitgtktest"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/polyfill"
)

// The conformance command sequence, straight to a WebKitWebDriver and
// through wdext --engine webkitgtk, gets the same statuses, error codes
// and messages. The direct driver is sent what wdext sends upstream: the
// request with wdext's polyfill-injecting proxy as its proxy capability
// (with it, MiniBrowser's reply has no "proxy" capability; without it,
// "proxy": {}). One step differs by design, in its message only: a
// command after delete session. The driver answers it itself; behind
// wdext that driver is gone (one driver per session), so wdext answers
// "invalid session id" with a message of its own.
func TestConformanceWithWebKitWebDriver(t *testing.T) {
	path := webkitgtktest.Require(t)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	page := pages.A + "/webdriver/conformance.html"

	// The direct driver gets the request as wdext sends it upstream: with
	// an injecting proxy of its own as the proxy capability.
	direct := &webkitgtk.Upstream{Driver: path, Inject: polyfill.Script("Profiler")}
	t.Cleanup(func() { direct.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	upstreamBody := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{}}}
	in, _, bind, err := direct.StartSession(ctx, upstreamBody)
	assert.NilError(t, err)
	defer bind("", nil)
	_, hasProxy := upstreamBody["capabilities"].(map[string]any)["alwaysMatch"].(map[string]any)["proxy"]
	assert.Assert(t, hasProxy, "%v", upstreamBody)
	want := conformanceSequence(t, newWire(t, in.URL.String(), false), upstreamBody, page)
	for _, o := range want {
		t.Log("WebKitWebDriver: ", o)
	}

	env := webkitgtktest.Start(t)
	body := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{}}}
	got := conformanceSequence(t, newWire(t, env.URL, true), body, page)
	last := len(want) - 1
	assert.Equal(t, len(got), len(want))
	assert.Equal(t, got[last].Step, "command after delete")
	assert.Equal(t, got[last].Error, want[last].Error)
	assert.Equal(t, got[last].Status, want[last].Status)
	got[last].Message = want[last].Message
	for _, os := range [][]outcome{want, got} {
		for i := range os {
			os[i].Value = uuids.ReplaceAllString(os[i].Value, "<uuid>")
			os[i].Message = uuids.ReplaceAllString(os[i].Message, "<uuid>")
		}
	}
	compareOutcomes(t, "wdext", want, got)
	assert.Equal(t, env.Server.Sessions().Len(), 0, "wdext still holds deleted sessions")
	assert.Equal(t, env.Upstream.Sessions(), 0, "drivers left running")
}

// uuids are WebKitWebDriver's session ids, window handles ("page-…") and
// element references ("node-…"), which differ between sessions.
var uuids = regexp.MustCompile(`[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}`)
