package webdriver_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

// A request in flight when the driver process exits is answered "invalid
// session id" at once, whether the driver just stops answering or drops
// the connection a moment before its exit is noticed.
func TestForwardDriverGone(t *testing.T) {
	for _, tc := range []struct {
		name string
		// upstream misbehaves once the request arrived, then gone closes.
		upstream func(w http.ResponseWriter, r *http.Request, gone chan struct{})
	}{{
		name: "stops answering",
		upstream: func(w http.ResponseWriter, r *http.Request, gone chan struct{}) {
			close(gone)
			<-r.Context().Done() // wdext must abandon the request
		},
	}, {
		name: "drops the connection first",
		upstream: func(w http.ResponseWriter, r *http.Request, gone chan struct{}) {
			c, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				c.Close()
			}
			time.Sleep(50 * time.Millisecond)
			close(gone)
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			gone := make(chan struct{})
			up := newFakeUpstream(t)
			up.setHandler(func(w http.ResponseWriter, r *http.Request) { tc.upstream(w, r, gone) })
			p := webdriver.NewProxy(nil, quietLog())
			req := httptest.NewRequest("POST", "/session/s1/execute/async", strings.NewReader(`{"script":"","args":[]}`))
			rec := httptest.NewRecorder()
			p.Forward(rec, req, up.url, gone)
			assert.Equal(t, rec.Code, 404, "%s", rec.Body)
			assertErrorShape(t, rec.Body.Bytes(), wire.InvalidSessionID)
		})
	}
	t.Run("already gone", func(t *testing.T) {
		gone := make(chan struct{})
		close(gone)
		p := webdriver.NewProxy(nil, quietLog())
		rec := httptest.NewRecorder()
		p.Forward(rec, httptest.NewRequest("GET", "/session/s1/title", nil), closedURL(t), gone)
		assert.Equal(t, rec.Code, 404, "%s", rec.Body)
		assertErrorShape(t, rec.Body.Bytes(), wire.InvalidSessionID)
	})
	t.Run("alive but unreachable", func(t *testing.T) {
		p := webdriver.NewProxy(nil, quietLog())
		rec := httptest.NewRecorder()
		u := closedURL(t)
		p.Forward(rec, httptest.NewRequest("GET", "/session/s1/title", nil), u, make(chan struct{}))
		assert.Equal(t, rec.Code, 500, "%s", rec.Body)
		assertErrorShape(t, rec.Body.Bytes(), wire.UnknownError)
		assert.Assert(t, strings.Contains(rec.Body.String(), u.Host), "%s", rec.Body)
	})
}

// Every endpoint of the W3C endpoint table reaches the driver with its
// methods, and only with them.
func TestClassicRoutes(t *testing.T) {
	// WebDriver §6.5 "Endpoints", less new session, delete session and
	// status, which wdext answers itself.
	endpoints := map[string][]string{
		"/session/S/timeouts":                 {"GET", "POST"},
		"/session/S/url":                      {"GET", "POST"},
		"/session/S/back":                     {"POST"},
		"/session/S/forward":                  {"POST"},
		"/session/S/refresh":                  {"POST"},
		"/session/S/title":                    {"GET"},
		"/session/S/window":                   {"GET", "POST", "DELETE"},
		"/session/S/window/new":               {"POST"},
		"/session/S/window/handles":           {"GET"},
		"/session/S/window/rect":              {"GET", "POST"},
		"/session/S/window/maximize":          {"POST"},
		"/session/S/window/minimize":          {"POST"},
		"/session/S/window/fullscreen":        {"POST"},
		"/session/S/frame":                    {"POST"},
		"/session/S/frame/parent":             {"POST"},
		"/session/S/element":                  {"POST"},
		"/session/S/elements":                 {"POST"},
		"/session/S/element/active":           {"GET"},
		"/session/S/element/E/element":        {"POST"},
		"/session/S/element/E/elements":       {"POST"},
		"/session/S/element/E/shadow":         {"GET"},
		"/session/S/shadow/R/element":         {"POST"},
		"/session/S/shadow/R/elements":        {"POST"},
		"/session/S/element/E/selected":       {"GET"},
		"/session/S/element/E/attribute/name": {"GET"},
		"/session/S/element/E/property/name":  {"GET"},
		"/session/S/element/E/css/color":      {"GET"},
		"/session/S/element/E/text":           {"GET"},
		"/session/S/element/E/name":           {"GET"},
		"/session/S/element/E/rect":           {"GET"},
		"/session/S/element/E/enabled":        {"GET"},
		"/session/S/element/E/computedrole":   {"GET"},
		"/session/S/element/E/computedlabel":  {"GET"},
		"/session/S/element/E/click":          {"POST"},
		"/session/S/element/E/clear":          {"POST"},
		"/session/S/element/E/value":          {"POST"},
		"/session/S/element/E/screenshot":     {"GET"},
		"/session/S/source":                   {"GET"},
		"/session/S/execute/sync":             {"POST"},
		"/session/S/execute/async":            {"POST"},
		"/session/S/cookie":                   {"GET", "POST", "DELETE"},
		"/session/S/cookie/name":              {"GET", "DELETE"},
		"/session/S/actions":                  {"POST", "DELETE"},
		"/session/S/alert/dismiss":            {"POST"},
		"/session/S/alert/accept":             {"POST"},
		"/session/S/alert/text":               {"GET", "POST"},
		"/session/S/screenshot":               {"GET"},
		"/session/S/print":                    {"POST"},
	}
	up := newFakeUpstream(t)
	srv := errorsServer(driver.Remote{URL: up.url})
	for path, methods := range endpoints {
		for _, m := range []string{"GET", "POST", "DELETE", "PUT"} {
			before := len(up.requests())
			var body *strings.Reader
			if m == "POST" {
				body = strings.NewReader(`{}`)
			} else {
				body = strings.NewReader("")
			}
			rec := serve(srv, httptest.NewRequest(m, path, body))
			allowed := false
			for _, a := range methods {
				allowed = allowed || a == m
			}
			if allowed {
				assert.Equal(t, rec.Code, 200, "%s %s: %s", m, path, rec.Body)
				got := up.requests()
				assert.Equal(t, len(got), before+1, "%s %s not forwarded", m, path)
				assert.Equal(t, got[len(got)-1].Method+" "+got[len(got)-1].Path, m+" "+path)
				continue
			}
			assert.Equal(t, rec.Code, 405, "%s %s: %s", m, path, rec.Body)
			assert.Equal(t, rec.Header().Get("Allow"), strings.Join(methods, ", "), "%s %s", m, path)
			assert.Equal(t, len(up.requests()), before, "%s %s went upstream", m, path)
		}
	}
	// Near misses are not classic commands: vendor paths under a session
	// go to the driver as they are, anything else is unknown.
	for _, path := range []string{"/session/S/element/E", "/session/S/execute", "/session/S/url/extra", "/session/S/goog/cdp/execute"} {
		before := len(up.requests())
		rec := serve(srv, httptest.NewRequest("POST", path, strings.NewReader(`{}`)))
		assert.Equal(t, rec.Code, 200, "%s: %s", path, rec.Body)
		assert.Equal(t, len(up.requests()), before+1, "%s", path)
	}
	// Unclean paths are unknown commands (chromedriver says so too), not
	// redirects.
	for _, path := range []string{"//session", "/session//url", "//status", "/wd/hub//session"} {
		rec := serve(srv, httptest.NewRequest("POST", path, strings.NewReader(`{}`)))
		expectError(t, rec, wire.UnknownCommand, "")
	}
}

// At debug level, one line per command: method, path, status, duration
// and session.
func TestDebugLog(t *testing.T) {
	var buf bytes.Buffer
	up := newFakeUpstream(t)
	srv := webdriver.NewServer(webdriver.Config{
		Upstream: driver.Remote{URL: up.url},
		Log:      slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	serve(srv, httptest.NewRequest("GET", "/session/abc/title", nil))
	line := buf.String()
	for _, want := range []string{"msg=command", "method=GET", "path=/session/abc/title", "status=200", "duration=", "session=abc"} {
		assert.Assert(t, strings.Contains(line, want), "%q lacks %s", line, want)
	}
	assert.Equal(t, strings.Count(line, "\n"), 1, "%q", line)
}
