package chromium_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/internal/e2e"
)

// newChromeSession creates a session straight on the driver at base with
// the machine's defaults, and returns its id.
func newChromeSession(t *testing.T, base string) string {
	t.Helper()
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{"browserName": "chrome"}}}
	chromium.ManagedDefaults().Apply(caps)
	body, _ := json.Marshal(caps)
	resp, err := http.Post(base+"/session", "application/json", bytes.NewReader(body))
	assert.NilError(t, err)
	defer resp.Body.Close()
	var v struct {
		Value struct {
			SessionID string `json:"sessionId"`
		} `json:"value"`
	}
	assert.NilError(t, json.NewDecoder(resp.Body).Decode(&v))
	assert.Equal(t, resp.StatusCode, 200)
	assert.Assert(t, v.Value.SessionID != "")
	return v.Value.SessionID
}

// A real chromedriver: killing it takes the browsers of its sessions with
// it, the next Current starts a new one that works, and Close leaves
// nothing behind.
func TestChromedriverKillTakesBrowsers(t *testing.T) {
	path := chromiumtest.Require(t)
	mark := fmt.Sprintf("WDEXT_TEST_MARK=%s-%d", t.Name(), os.Getpid())
	t.Setenv("WDEXT_TEST_MARK", mark[len("WDEXT_TEST_MARK="):])
	d := &chromium.Driver{Path: path}
	t.Cleanup(func() { d.Close() })

	in, err := d.Current(ctx(t))
	assert.NilError(t, err)
	assert.Assert(t, d.Ready(ctx(t)))
	newChromeSession(t, in.URL.String())
	procs := e2e.MarkedProcesses(mark)
	browsers := 0
	for _, comm := range procs {
		if comm != "chromedriver" {
			browsers++
		}
	}
	assert.Assert(t, browsers > 0, "no browser found among %v", procs)

	d.Kill()
	assert.Assert(t, !in.Alive())
	e2e.WaitGone(t, mark)

	next, err := d.Current(ctx(t))
	assert.NilError(t, err)
	assert.Assert(t, next.URL.String() != in.URL.String() || next.Done != in.Done)
	newChromeSession(t, next.URL.String())

	assert.NilError(t, d.Close())
	e2e.WaitGone(t, mark)
}
