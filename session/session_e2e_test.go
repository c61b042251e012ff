package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

// call sends a WebDriver command and returns the status and the reply's
// W3C error (nil on success).
func call(t *testing.T, method, u string, body string) (int, *wire.Error, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	assert.NilError(t, err)
	resp, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	e, _ := wire.ParseError(data)
	return resp.StatusCode, e, data
}

func newSession(t *testing.T, base string) string {
	t.Helper()
	status, e, data := call(t, "POST", base+"/session", `{"capabilities":{"alwaysMatch":{"browserName":"chrome"}}}`)
	assert.Assert(t, status == 200 && e == nil, "%d %s", status, data)
	var v struct {
		Value struct {
			SessionID string `json:"sessionId"`
		} `json:"value"`
	}
	assert.NilError(t, json.Unmarshal(data, &v))
	id := v.Value.SessionID
	t.Cleanup(func() { call(t, "DELETE", base+"/session/"+id, "") })
	return id
}

func assertInvalidSession(t *testing.T, status int, e *wire.Error, data []byte) {
	t.Helper()
	assert.Equal(t, status, http.StatusNotFound, "%s", data)
	assert.Assert(t, e != nil, "%s", data)
	assert.Equal(t, e.Code, wire.InvalidSessionID, "%s", data)
}

// --session-timeout: a session left idle is deleted in the driver, not
// only forgotten by wdext.
func TestSessionTimeoutDeletesUpstream(t *testing.T) {
	env := chromiumtest.Start(t)
	id := newSession(t, env.URL)
	sess, ok := env.Server.Sessions().Get(id)
	assert.Assert(t, ok)
	upstream := sess.Upstream.String()
	// Alive in the driver before it expires.
	status, e, data := call(t, "GET", upstream+"/session/"+id+"/title", "")
	assert.Assert(t, status == 200 && e == nil, "%d %s", status, data)

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		env.Server.ExpireIdle(ctx, 300*time.Millisecond)
	}()
	t.Cleanup(func() { cancel(); <-stopped })

	deadline := time.Now().Add(30 * time.Second)
	for env.Server.Sessions().Len() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle session was not expired")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Gone in the driver itself, and wdext says so too.
	status, e, data = call(t, "GET", upstream+"/session/"+id+"/title", "")
	assertInvalidSession(t, status, e, data)
	status, e, data = call(t, "GET", env.URL+"/session/"+id+"/title", "")
	assertInvalidSession(t, status, e, data)
}

// DELETE /session/{id} ends the session and drops wdext's state for it:
// the registry entry and every per-session resource.
func TestDeleteSessionCleansState(t *testing.T) {
	env := chromiumtest.Start(t, forcesample.Register)
	id := newSession(t, env.URL)
	sess, ok := env.Server.Sessions().Get(id)
	assert.Assert(t, ok)
	assert.Equal(t, sess.BrowserName, "chrome")
	assert.Assert(t, engine.Of(sess).(*chromium.Engine).DebuggerAddress() != "", "no CDP endpoint recorded")
	res := &closer{}
	_, err := sess.Resource("test", func() (io.Closer, error) { return res, nil })
	assert.NilError(t, err)

	status, e, data := call(t, "DELETE", env.URL+"/session/"+id, "")
	assert.Assert(t, status == 200 && e == nil, "%d %s", status, data)
	assert.Equal(t, env.Server.Sessions().Len(), 0)
	assert.Equal(t, res.n.Load(), int32(1))
	// The extension route knows the session is gone.
	status, e, data = call(t, "POST", env.URL+"/session/"+id+"/forcesample", "{}")
	assertInvalidSession(t, status, e, data)
}

// Session-scoped extension routes answer "invalid session id" for ids
// wdext does not know, without asking the driver.
func TestExtensionRouteUnknownSession(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the driver was asked %s %s", r.Method, r.URL.Path)
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL)
	srv := webdriver.NewServer(webdriver.Config{
		Upstream: driver.Remote{URL: u},
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	forcesample.Register(srv)
	for _, path := range []string{"/session/nope/forcesample", "/wd/hub/session/nope/forcesample"} {
		for _, body := range []string{"", "{}"} {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("POST", path, strings.NewReader(body))
			req.Host = "127.0.0.1:4444"
			srv.ServeHTTP(rec, req)
			e, _ := wire.ParseError(rec.Body.Bytes())
			assertInvalidSession(t, rec.Code, e, rec.Body.Bytes())
			assert.Equal(t, rec.Header().Get("Content-Type"), wire.ContentType)
			assert.Assert(t, bytes.Contains(rec.Body.Bytes(), []byte(`"stacktrace"`)), "%s", rec.Body)
		}
	}
	// The right path with a wrong method is still "unknown method".
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/session/nope/forcesample", nil)
	req.Host = "127.0.0.1:4444"
	srv.ServeHTTP(rec, req)
	e, _ := wire.ParseError(rec.Body.Bytes())
	assert.Equal(t, rec.Code, http.StatusMethodNotAllowed, "%s", rec.Body)
	assert.Equal(t, e.Code, wire.UnknownMethod)
}
