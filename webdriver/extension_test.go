package webdriver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
)

// An extension path may take several methods, added one at a time; other
// methods are "unknown method" naming all of them.
func TestExtensionPathWithSeveralMethods(t *testing.T) {
	up := newFakeUpstream(t)
	srv := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: up.url}, Log: quietLog()})
	answer := func(v string) webdriver.Command {
		return func(context.Context, *session.Session, []byte) (any, error) { return v, nil }
	}
	const path = "/session/{id}/wdext/thing"
	srv.Handle("GET", path, answer("got"))
	srv.Handle("POST", path, answer("posted"))
	rec := serve(srv, httptest.NewRequest("POST", "/session", strings.NewReader(`{}`)))
	assert.Equal(t, rec.Code, 200, rec.Body.String())

	rec = serve(srv, httptest.NewRequest("GET", "/session/s1/wdext/thing", nil))
	assert.Equal(t, rec.Body.String(), `{"value":"got"}`)
	rec = serve(srv, httptest.NewRequest("POST", "/session/s1/wdext/thing", strings.NewReader(`{}`)))
	assert.Equal(t, rec.Body.String(), `{"value":"posted"}`)
	rec = serve(srv, httptest.NewRequest("DELETE", "/session/s1/wdext/thing", nil))
	assert.Equal(t, rec.Code, http.StatusMethodNotAllowed)
	assert.Assert(t, strings.Contains(rec.Body.String(), `"unknown method"`), rec.Body.String())
	assert.Equal(t, rec.Header().Get("Allow"), "GET, POST")
	rec = serve(srv, httptest.NewRequest("GET", "/session/nope/wdext/thing", nil))
	assert.Equal(t, rec.Code, http.StatusNotFound)
	assert.Assert(t, strings.Contains(rec.Body.String(), `"invalid session id"`), rec.Body.String())
}

// A legacy new-session reply (top-level sessionId, capabilities as the
// value) registers the session too: its extension commands work.
func TestLegacyNewSessionIsRegistered(t *testing.T) {
	up := newFakeUpstream(t)
	up.setHandler(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write([]byte(`{"sessionId":"legacy1","status":0,"value":{"browserName":"chrome","goog:chromeOptions":{"debuggerAddress":"127.0.0.1:9"}}}`))
	})
	srv := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: up.url}, Log: quietLog()})
	rec := serve(srv, httptest.NewRequest("POST", "/session", strings.NewReader(`{"desiredCapabilities":{"browserName":"chrome"}}`)))
	assert.Equal(t, rec.Code, 200, rec.Body.String())
	sess, ok := srv.Sessions().Get("legacy1")
	assert.Assert(t, ok, "legacy session not registered")
	assert.Equal(t, sess.BrowserName, "chrome")
	assert.Equal(t, chromium.DebuggerAddress(sess.Capabilities), "127.0.0.1:9")
}

// An extension may take over a classic command (method and path); the
// command's other methods and the other classic commands still go to the
// driver, and an error of the driver that the extension asks comes back
// as the driver's.
func TestExtensionTakesOverClassicCommand(t *testing.T) {
	up := newFakeUpstream(t)
	srv := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: up.url}, Log: quietLog()})
	srv.Handle("POST", "/session/{id}/window/new", func(ctx context.Context, sess *session.Session, body []byte) (any, error) {
		var v any
		if err := webdriver.AskDriver(ctx, sess, "POST", "window/new", body, &v); err != nil {
			return nil, err
		}
		return map[string]any{"driver": v, "wrapped": true}, nil
	})
	rec := serve(srv, httptest.NewRequest("POST", "/session", strings.NewReader(`{}`)))
	assert.Equal(t, rec.Code, 200, rec.Body.String())

	rec = serve(srv, httptest.NewRequest("POST", "/session/s1/window/new", strings.NewReader(`{"type":"tab"}`)))
	assert.Equal(t, rec.Body.String(), `{"value":{"driver":null,"wrapped":true}}`)
	last := up.requests()[len(up.requests())-1]
	assert.Equal(t, last.Path, "/session/s1/window/new")
	assert.Equal(t, string(last.Body), `{"type":"tab"}`, "the client's body, as it came")

	rec = serve(srv, httptest.NewRequest("GET", "/session/s1/window", nil))
	assert.Equal(t, rec.Body.String(), `{"value":null}`, "other classic commands are proxied")
	rec = serve(srv, httptest.NewRequest("GET", "/session/s1/window/new", nil))
	assert.Equal(t, rec.Code, http.StatusMethodNotAllowed)
	assert.Equal(t, rec.Header().Get("Allow"), "POST")

	up.setHandler(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"value":{"error":"no such window","message":"gone","stacktrace":""}}`))
	})
	rec = serve(srv, httptest.NewRequest("POST", "/session/s1/window/new", strings.NewReader(`{}`)))
	assert.Equal(t, rec.Code, http.StatusNotFound)
	assert.Assert(t, strings.Contains(rec.Body.String(), `"no such window"`), rec.Body.String())
}
