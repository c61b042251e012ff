package webdriver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/wire"
)

// elementKey is the W3C web element identifier.
const elementKey = "element-6066-11e4-a52e-4f735466cecf"

// rawClient is a raw WebDriver client: plain net/http, so tests see status
// codes, headers and bodies exactly as they come.
type rawClient struct {
	t    testing.TB
	base string
	http *http.Client
	// jsonOnly, when set, fails the test on any reply whose Content-Type
	// is not wire.ContentType (wdext's promise).
	jsonOnly bool
}

func newWire(t testing.TB, base string, jsonOnly bool) *rawClient {
	return &rawClient{t: t, base: strings.TrimSuffix(base, "/"), http: &http.Client{Timeout: 60 * time.Second}, jsonOnly: jsonOnly}
}

// reply is one answer: its status, headers, body, and the decoded value or
// W3C error.
type reply struct {
	Status int
	Header http.Header
	Body   []byte
	Value  json.RawMessage
	Err    *wire.Error
}

// do sends method path with body: nil for none, []byte or string as is,
// anything else as JSON. Bodies go with Content-Type application/json.
func (c *rawClient) do(method, path string, body any) reply {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		assert.NilError(c.t, err)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	assert.NilError(c.t, err)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	resp, err := c.http.Do(req)
	assert.NilError(c.t, err, "%s %s", method, path)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	assert.NilError(c.t, err, "%s %s: reading reply", method, path)
	if c.jsonOnly {
		assert.Equal(c.t, resp.Header.Get("Content-Type"), wire.ContentType, "%s %s: %s", method, path, data)
	}
	r := reply{Status: resp.StatusCode, Header: resp.Header, Body: data}
	if e, ok := wire.ParseError(data); ok {
		r.Err = e
		return r
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(data, &env); err == nil {
		r.Value = env.Value
	}
	return r
}

// ok fails the test unless r is a success, and decodes its value into v
// (when v is not nil).
func (r reply) ok(t testing.TB, v any) {
	t.Helper()
	assert.Assert(t, r.Err == nil && r.Status == http.StatusOK, "status %d: %s", r.Status, r.Body)
	if v != nil {
		assert.NilError(t, json.Unmarshal(r.Value, v), "%s", r.Body)
	}
}

// w3cError fails the test unless r is a W3C error reply with code and the
// HTTP status the spec pairs with it, in the exact envelope shape.
func (r reply) w3cError(t testing.TB, code wire.ErrorCode) {
	t.Helper()
	assert.Equal(t, r.Status, code.Status(), "%s", r.Body)
	assertErrorShape(t, r.Body, code)
}

// assertErrorShape checks body is {"value":{"error":code,"message":string,
// "stacktrace":string, …}}.
func assertErrorShape(t testing.TB, body []byte, code wire.ErrorCode) {
	t.Helper()
	var env map[string]map[string]any
	assert.NilError(t, json.Unmarshal(body, &env), "not a W3C error: %s", body)
	v, found := env["value"]
	assert.Assert(t, found, "no value in %s", body)
	assert.Equal(t, v["error"], string(code), "%s", body)
	_, isString := v["message"].(string)
	assert.Assert(t, isString, "message is not a string: %s", body)
	_, isString = v["stacktrace"].(string)
	assert.Assert(t, isString, "stacktrace is not a string: %s", body)
}

// newSessionBody is a minimal W3C new-session request asking for Chrome.
func newSessionBody(extra map[string]any) map[string]any {
	always := map[string]any{"browserName": "chrome"}
	for k, v := range extra {
		always[k] = v
	}
	return map[string]any{"capabilities": map[string]any{"alwaysMatch": always}}
}

// withManagedDefaults is body as wdext would send it upstream in managed
// mode: with this machine's Chromium binary, switches and V8 flags.
func withManagedDefaults(body map[string]any) map[string]any {
	// Round trip through JSON: Apply works on decoded JSON.
	data, _ := json.Marshal(body)
	var out map[string]any
	json.Unmarshal(data, &out)
	chromium.ManagedDefaults().Apply(out)
	return out
}

// newSession creates a session and returns its id; the session is deleted
// when the test ends (an error then is fine: the test may have ended it).
func (c *rawClient) newSession(body map[string]any) (string, map[string]any) {
	c.t.Helper()
	var v struct {
		SessionID    string         `json:"sessionId"`
		Capabilities map[string]any `json:"capabilities"`
	}
	c.do("POST", "/session", body).ok(c.t, &v)
	assert.Assert(c.t, v.SessionID != "")
	c.t.Cleanup(func() {
		req, _ := http.NewRequest("DELETE", c.base+"/session/"+v.SessionID, nil)
		if resp, err := c.http.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	return v.SessionID, v.Capabilities
}

var (
	elementIDs = regexp.MustCompile(`f\.[0-9A-Fa-f]{32}\.d\.[0-9A-Fa-f]{32}\.e\.[0-9]+`)
	hexIDs     = regexp.MustCompile(`\b[0-9A-Fa-f]{32}\b`)
)

// normalise replaces what legitimately differs between two sessions
// (session ids, window handles, element references) with placeholders.
func normalise(s string) string {
	s = elementIDs.ReplaceAllString(s, "<element>")
	return hexIDs.ReplaceAllString(s, "<id>")
}
