package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/webkitgtk/webkitgtktest"
	"github.com/wdext/wdext/internal/e2e"
)

// wdext serve --engine webkitgtk: sessions (one WebKitWebDriver and
// MiniBrowser each, on wdext's own Xvfb), forcesample through the
// polyfill, and on SIGTERM nothing of it left.
func TestServeWebKitGTK(t *testing.T) {
	webkitgtktest.Require(t)
	s := startServe(t, "--engine", "webkitgtk")
	var ids []string
	for range 2 {
		resp, err := http.Post(s.url+"/session", "application/json", strings.NewReader(`{"capabilities":{"alwaysMatch":{}}}`))
		assert.NilError(t, err)
		var v struct {
			Value struct {
				SessionID    string         `json:"sessionId"`
				Capabilities map[string]any `json:"capabilities"`
			} `json:"value"`
		}
		assert.NilError(t, json.NewDecoder(resp.Body).Decode(&v))
		resp.Body.Close()
		assert.Equal(t, resp.StatusCode, 200)
		assert.Equal(t, v.Value.Capabilities["browserName"], "MiniBrowser")
		ids = append(ids, v.Value.SessionID)
	}
	resp, err := http.Post(s.url+"/session/"+ids[0]+"/forcesample", "application/json", strings.NewReader(`{}`))
	assert.NilError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, resp.StatusCode, 200, "%s", body)
	assert.Equal(t, string(body), `{"value":null}`)
	comms := map[string]int{}
	for _, c := range e2e.MarkedProcesses(s.mark) {
		comms[c]++
	}
	assert.Equal(t, comms["WebKitWebDriver"], 2, "%v", comms)
	assert.Equal(t, comms["MiniBrowser"], 2, "%v", comms)
	assert.Equal(t, comms["Xvfb"], 1, "%v", comms)

	s.signalAndWait(t, syscall.SIGTERM)
	assert.Assert(t, strings.Contains(s.log(), `msg="shutting down" sessions=2`), "%s", s.log())
	left := settle(0, func() int { return len(e2e.MarkedProcesses(s.mark)) })
	assert.Equal(t, left, 0, "left behind: %v", e2e.MarkedProcesses(s.mark))
}

// A wdext serving WebKitGTK killed outright leaves nothing: no Xvfb, no
// WebKitWebDriver, no MiniBrowser or its WebKit processes, no TMPDIR —
// without a next wdext (issue 28).
func TestKilledWebKitGTKServeLeavesNothing(t *testing.T) {
	webkitgtktest.Require(t)
	tmp := shortTempDir(t)
	s := startServeEnv(t, []string{"TMPDIR=" + tmp}, "--engine", "webkitgtk")
	for range 2 {
		status, body := s.post(t, "/session", `{"capabilities":{"alwaysMatch":{}}}`)
		assert.Equal(t, status, 200, body)
	}
	comms := map[string]int{}
	for _, c := range s.started() {
		comms[c]++
	}
	assert.Equal(t, comms["MiniBrowser"], 2, "%v", comms)
	assert.Assert(t, len(wdextDirs(t, tmp)) >= 5, "%v", wdextDirs(t, tmp)) // Xvfb, 2 drivers, 2 browsers
	killed := time.Now()
	assert.NilError(t, s.cmd.Process.Kill())
	<-s.exited
	gone := within(60*time.Second, func() bool { return len(s.started()) == 0 && len(wdextDirs(t, tmp)) == 0 })
	t.Logf("all gone %v after SIGKILL (%s)", time.Since(killed).Round(time.Millisecond), containment(s.log()))
	assert.Assert(t, gone, "left after wdext was killed: %v, %v", s.started(), wdextDirs(t, tmp))
}
