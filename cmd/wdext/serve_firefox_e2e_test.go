package main

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/firefox/firefoxtest"
	"github.com/wdext/wdext/internal/e2e"
)

// wdext serve --engine firefox: sessions (one Firefox each, wdext its
// Marionette client), forcesample through the polyfill, and on SIGTERM
// nothing of it left.
func TestServeFirefox(t *testing.T) {
	firefoxtest.Require(t)
	s := startServe(t, "--engine", "firefox")
	var ids []string
	for range 2 {
		status, body := s.post(t, "/session", `{"capabilities":{"alwaysMatch":{"browserName":"firefox"}}}`)
		assert.Equal(t, status, 200, body)
		var v struct {
			Value struct {
				SessionID    string         `json:"sessionId"`
				Capabilities map[string]any `json:"capabilities"`
			} `json:"value"`
		}
		assert.NilError(t, json.Unmarshal([]byte(body), &v))
		assert.Equal(t, v.Value.Capabilities["browserName"], "firefox")
		_, hasWS := v.Value.Capabilities["webSocketUrl"]
		assert.Assert(t, !hasWS, "webSocketUrl in a reply to a client that did not ask: %s", body)
		ids = append(ids, v.Value.SessionID)
	}
	status, body := s.post(t, "/session/"+ids[0]+"/forcesample", `{}`)
	assert.Equal(t, status, 200, body)
	assert.Equal(t, body, `{"value":null}`)
	comms := map[string]int{}
	for _, c := range e2e.MarkedProcesses(s.mark) {
		comms[c]++
	}
	assert.Assert(t, comms["firefox-esr"] >= 2, "%v", comms)

	s.signalAndWait(t, syscall.SIGTERM)
	assert.Assert(t, strings.Contains(s.log(), `msg="shutting down" sessions=2`), "%s", s.log())
	left := settle(0, func() int { return len(e2e.MarkedProcesses(s.mark)) })
	assert.Equal(t, left, 0, "left behind: %v", e2e.MarkedProcesses(s.mark))
}

// A wdext serving Firefox killed outright leaves nothing: no Firefox, no
// content process, no profile.
func TestKilledFirefoxServeLeavesNothing(t *testing.T) {
	firefoxtest.Require(t)
	tmp := shortTempDir(t)
	s := startServeEnv(t, []string{"TMPDIR=" + tmp}, "--engine", "firefox")
	for range 2 {
		status, body := s.post(t, "/session", `{"capabilities":{}}`)
		assert.Equal(t, status, 200, body)
	}
	assert.Assert(t, len(s.started()) >= 4, "%v", s.started()) // 2 browsers and their content processes
	assert.Equal(t, len(wdextDirs(t, tmp)), 2, "%v", wdextDirs(t, tmp))
	killed := time.Now()
	assert.NilError(t, s.cmd.Process.Kill())
	<-s.exited
	gone := within(60*time.Second, func() bool { return len(s.started()) == 0 && len(wdextDirs(t, tmp)) == 0 })
	t.Logf("all gone %v after SIGKILL (%s)", time.Since(killed).Round(time.Millisecond), containment(s.log()))
	assert.Assert(t, gone, "left after wdext was killed: %v, %v", s.started(), wdextDirs(t, tmp))
}

// wdext wpt --engine firefox runs the bundled suite as
// expectations-firefox.json says.
func TestWPTFirefox(t *testing.T) {
	firefoxtest.Require(t)
	requireHarness(t)
	out, errOut, code := wdextIn(t, repoRoot(t), nil, 5*time.Minute, "wpt", "--engine", "firefox", "testdata/wpt", "--log-level", "error")
	assert.Equal(t, code, 0, "%s\n%s", out, errOut)
	assert.Assert(t, strings.Contains(out, "expectations-firefox.json"), out)
	assert.Assert(t, strings.Contains(out, "All results were as expected."), out)
}
