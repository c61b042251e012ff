package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// RawSession is a WebDriver session driven with plain HTTP, for tests that
// need commands tebeka/selenium lacks or engines it cannot talk to. The
// session is deleted when the test ends.
type RawSession struct {
	t    testing.TB
	base string // …/session/ID
}

// NewRawSession creates a session at url with caps as alwaysMatch.
func NewRawSession(t testing.TB, url string, caps map[string]any) *RawSession {
	t.Helper()
	var created struct {
		SessionID string `json:"sessionId"`
	}
	call(t, "POST", url+"/session", map[string]any{"capabilities": map[string]any{"alwaysMatch": caps}}, &created)
	s := &RawSession{t: t, base: url + "/session/" + created.SessionID}
	t.Cleanup(func() {
		req, _ := http.NewRequest("DELETE", s.base, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	return s
}

// Call sends a command at path (relative to the session, e.g. "/url") and
// decodes its value into out (if not nil); anything but 200 fails the test.
func (s *RawSession) Call(method, path string, body, out any) {
	s.t.Helper()
	call(s.t, method, s.base+path, body, out)
}

// Async runs an asynchronous script (its last argument is the callback)
// and decodes the result into out.
func (s *RawSession) Async(script string, out any) {
	s.t.Helper()
	s.Call("POST", "/execute/async", map[string]any{"script": script, "args": []any{}}, out)
}

func call(t testing.TB, method, url string, body, out any) {
	t.Helper()
	var data []byte
	if body != nil {
		data, _ = json.Marshal(body)
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(data))
	assert.NilError(t, err)
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	assert.NilError(t, err)
	defer resp.Body.Close()
	var v struct {
		Value json.RawMessage `json:"value"`
	}
	assert.NilError(t, json.NewDecoder(resp.Body).Decode(&v))
	assert.Equal(t, resp.StatusCode, 200, "%s %s: %s", method, url, v.Value)
	if out != nil {
		assert.NilError(t, json.Unmarshal(v.Value, out))
	}
}
