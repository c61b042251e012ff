package webdriver_test

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

func TestErrorStatuses(t *testing.T) {
	for code, status := range map[wire.ErrorCode]int{
		wire.InvalidArgument:      400,
		wire.InvalidSessionID:     404,
		wire.NoSuchElement:        404,
		wire.UnknownCommand:       404,
		wire.UnknownMethod:        405,
		wire.JavascriptError:      500,
		wire.ScriptTimeout:        500,
		wire.SessionNotCreated:    500,
		wire.UnknownError:         500,
		wire.UnsupportedOperation: 500,
		"made up":                 500,
	} {
		assert.Equal(t, code.Status(), status, "%s", code)
	}
}

func TestWriteErrorShape(t *testing.T) {
	rec := httptest.NewRecorder()
	wire.WriteError(rec, errors.New("plain"))
	assert.Equal(t, rec.Code, 500)
	assert.Equal(t, rec.Header().Get("Content-Type"), wire.ContentType)
	assert.Equal(t, rec.Body.String(), `{"value":{"error":"unknown error","message":"plain","stacktrace":""}}`)

	rec = httptest.NewRecorder()
	wrapped := errors.Join(errors.New("context"), wire.Errorf(wire.NoSuchAlert, "none %d", 1))
	wire.WriteError(rec, wrapped)
	assert.Equal(t, rec.Code, 404)
	e, ok := wire.ParseError(rec.Body.Bytes())
	assert.Assert(t, ok)
	assert.Equal(t, *e, wire.Error{Code: wire.NoSuchAlert, Message: "none 1"})

	_, ok = wire.ParseError([]byte(`{"value":null}`))
	assert.Assert(t, !ok)
	_, ok = wire.ParseError([]byte(`not json`))
	assert.Assert(t, !ok)
}

func TestDecodeArgs(t *testing.T) {
	type params struct {
		Script string `json:"script"`
		Args   []any  `json:"args"`
		N      int    `json:"n"`
	}
	for _, body := range []string{"", "  ", "{}", ` {"script":"x","args":[1]} `} {
		var p params
		assert.NilError(t, webdriver.DecodeArgs([]byte(body), &p), "%q", body)
	}
	for body, mentions := range map[string]string{
		`[]`:                    "JSON object",
		`null`:                  "JSON object",
		`"x"`:                   "JSON object",
		`{`:                     "malformed",
		`{"script":1}`:          `"script"`,
		`{"args":{}}`:           `"args"`,
		`{"n":1.5}`:             `"n"`,
		`{"n":"1"}`:             `"n"`,
		`{} {}`:                 "trailing",
		`{}x`:                   "trailing",
		`{"script":"a",}`:       "malformed",
		"{\"script\":\"\xff\"}": "",
	} {
		var p params
		err := webdriver.DecodeArgs([]byte(body), &p)
		if body == "{\"script\":\"\xff\"}" {
			// Invalid UTF-8 in a string is replaced, as encoding/json does.
			assert.NilError(t, err)
			continue
		}
		var we *wire.Error
		assert.Assert(t, errors.As(err, &we), "%q: %v", body, err)
		assert.Equal(t, we.Code, wire.InvalidArgument, "%q", body)
		assert.Assert(t, strings.Contains(we.Message, mentions), "%q: %q does not mention %q", body, we.Message, mentions)
	}
}

// errorsServer is wdext in front of up, with the defaults of wdext serve.
func errorsServer(up driver.Upstream) *webdriver.Server {
	return webdriver.NewServer(webdriver.Config{Upstream: up, Guard: webdriver.Guard{MaxBody: 256 << 20}, Log: quietLog()})
}

func expectError(t *testing.T, rec *httptest.ResponseRecorder, code wire.ErrorCode, mentions string) {
	t.Helper()
	assert.Equal(t, rec.Code, code.Status(), "%s", rec.Body)
	assert.Equal(t, rec.Header().Get("Content-Type"), wire.ContentType)
	assertErrorShape(t, rec.Body.Bytes(), code)
	assert.Assert(t, strings.Contains(rec.Body.String(), mentions), "%s does not mention %q", rec.Body, mentions)
}

func TestNewSessionMalformed(t *testing.T) {
	up := newFakeUpstream(t)
	srv := errorsServer(managed{up.url})
	for _, body := range []string{"", "{", "[]", "null", `"caps"`, "42", `{"capabilities":{}} {}`, `{"capabilities":}`} {
		rec := serve(srv, httptest.NewRequest("POST", "/session", strings.NewReader(body)))
		expectError(t, rec, wire.InvalidArgument, "")
	}
	assert.Equal(t, len(up.requests()), 0)
}

// The client's JSON reaches the driver as written, apart from what the
// defaults add: numbers keep their spelling.
func TestNewSessionKeepsNumbers(t *testing.T) {
	up := newFakeUpstream(t)
	srv := webdriver.NewServer(webdriver.Config{Upstream: managed{up.url}, Defaults: testDefaults, Log: quietLog()})
	body := `{"capabilities":{"alwaysMatch":{"timeouts":{"script":1e3,"pageLoad":12345678901234567890,"implicit":0.50}}}}`
	rec := serve(srv, httptest.NewRequest("POST", "/session", strings.NewReader(body)))
	assert.Equal(t, rec.Code, 200, "%s", rec.Body)
	sent := string(up.requests()[0].Body)
	for _, n := range []string{`"script":1e3`, `"pageLoad":12345678901234567890`, `"implicit":0.50`, `"binary":"/usr/bin/chromium"`} {
		assert.Assert(t, strings.Contains(sent, n), "%s lost %s", sent, n)
	}
	// Not managed: the body goes as it came, byte for byte.
	up2 := newFakeUpstream(t)
	srv = webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: up2.url}, Defaults: testDefaults, Log: quietLog()})
	rec = serve(srv, httptest.NewRequest("POST", "/session", strings.NewReader(body)))
	assert.Equal(t, rec.Code, 200, "%s", rec.Body)
	assert.Equal(t, string(up2.requests()[0].Body), body)
}

func TestUnknownCommand(t *testing.T) {
	up := newFakeUpstream(t)
	srv := errorsServer(driver.Remote{URL: up.url})
	for _, req := range []struct{ method, path string }{
		{"GET", "/foo"}, {"POST", "/foo/bar"}, {"GET", "/"}, {"GET", "/wd/hub/foo"}, {"GET", "/wd/hub"}, {"GET", "/sessionx"},
	} {
		rec := serve(srv, httptest.NewRequest(req.method, req.path, nil))
		expectError(t, rec, wire.UnknownCommand, strings.TrimPrefix(req.path, "/wd/hub"))
	}
	assert.Equal(t, len(up.requests()), 0)
}

func TestUnknownMethod(t *testing.T) {
	up := newFakeUpstream(t)
	srv := errorsServer(driver.Remote{URL: up.url})
	for _, req := range []struct{ method, path, allow string }{
		{"PUT", "/session/x/url", "GET, POST"},
		{"GET", "/session/x/element", "POST"},
		{"POST", "/session/x/title", "GET"},
		{"DELETE", "/status", "GET"},
		{"GET", "/session", "POST"},
		{"PUT", "/session/x", "DELETE"},
		{"PATCH", "/wd/hub/session/x/cookie", "GET, POST, DELETE"},
		{"POST", "/session/x/element/e/text", "GET"},
	} {
		rec := serve(srv, httptest.NewRequest(req.method, req.path, nil))
		expectError(t, rec, wire.UnknownMethod, req.method)
		assert.Equal(t, rec.Header().Get("Allow"), req.allow, "%s %s", req.method, req.path)
	}
	assert.Equal(t, len(up.requests()), 0)
}

// closedURL is an address where nothing listens.
func closedURL(t *testing.T) *url.URL {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	u := &url.URL{Scheme: "http", Host: l.Addr().String()}
	l.Close()
	return u
}

func TestUpstreamUnreachable(t *testing.T) {
	u := closedURL(t)
	for name, up := range map[string]driver.Upstream{"remote": driver.Remote{URL: u}, "managed": managed{u}} {
		t.Run(name, func(t *testing.T) {
			srv := errorsServer(up)
			rec := serve(srv, httptest.NewRequest("POST", "/session", strings.NewReader(`{"capabilities":{}}`)))
			expectError(t, rec, wire.SessionNotCreated, u.String())
			rec = serve(srv, httptest.NewRequest("GET", "/session/x/title", nil))
			expectError(t, rec, wire.UnknownError, u.String())
			rec = serve(srv, httptest.NewRequest("DELETE", "/session/x", nil))
			expectError(t, rec, wire.UnknownError, u.String())
		})
	}
}

// A driver that cannot be started: new sessions are "session not created"
// saying why; commands on unknown sessions are "invalid session id".
func TestManagedDriverFailsToStart(t *testing.T) {
	d := &chromium.Driver{Path: t.TempDir() + "/no-such-chromedriver"}
	srv := errorsServer(d)
	rec := serve(srv, httptest.NewRequest("POST", "/session", strings.NewReader(`{}`)))
	expectError(t, rec, wire.SessionNotCreated, "no-such-chromedriver")
	rec = serve(srv, httptest.NewRequest("GET", "/session/x/title", nil))
	expectError(t, rec, wire.InvalidSessionID, "no-such-chromedriver")
}

// Replies that are not JSON (chromedriver's plain-text refusals, a proxy's
// HTML page) become W3C errors quoting them; JSON passes through as is.
func TestUpstreamNonJSON(t *testing.T) {
	for _, tc := range []struct {
		name, ct, body string
		status         int
		wantStatus     int
		wantCode       wire.ErrorCode // "" for a pass-through
	}{
		{"plain text refusal", "text/plain", "Host header or origin header is specified and is not whitelisted or localhost.\n", 500, 500, wire.UnknownError},
		{"html 502", "text/html", "<html><body>Bad Gateway</body></html>", 502, 502, wire.UnknownError},
		{"text 200", "text/plain", "ok", 200, 500, wire.UnknownError},
		{"no content type, not JSON", "", "oops", 404, 404, wire.UnknownError},
		{"no content type, JSON", "", `{"value":{"error":"no such element","message":"m","stacktrace":""}}`, 404, 404, ""},
		{"JSON error", "application/json", `{"value":{"error":"no such alert","message":"none","stacktrace":"x"}}`, 404, 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newFakeUpstream(t)
			up.setHandler(func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Content-Type"] = nil
				if tc.ct != "" {
					w.Header().Set("Content-Type", tc.ct)
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			srv := errorsServer(driver.Remote{URL: up.url})
			for _, req := range []*http.Request{
				httptest.NewRequest("GET", "/session/x/title", nil),
				httptest.NewRequest("POST", "/session", strings.NewReader(`{}`)),
			} {
				rec := serve(srv, req)
				assert.Equal(t, rec.Code, tc.wantStatus, "%s", rec.Body)
				assert.Equal(t, rec.Header().Get("Content-Type"), wire.ContentType)
				if tc.wantCode == "" {
					assert.Equal(t, rec.Body.String(), tc.body)
					continue
				}
				assertErrorShape(t, rec.Body.Bytes(), tc.wantCode)
				var env struct{ Value struct{ Message string } }
				json.Unmarshal(rec.Body.Bytes(), &env)
				assert.Assert(t, strings.Contains(env.Value.Message, strings.TrimSpace(tc.body)), "%q does not quote the reply", env.Value.Message)
			}
		})
	}
}

// A success passes through byte for byte, status and all.
func TestPassThrough(t *testing.T) {
	up := newFakeUpstream(t)
	const reply = `{"value" : {"odd":  "spacing", "n": 1e3}}`
	up.setHandler(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Driver", "yes")
		io.WriteString(w, reply)
	})
	srv := errorsServer(driver.Remote{URL: up.url})
	body := `{"script" : "return 1",  "args":[1e3]}`
	req := httptest.NewRequest("POST", "/wd/hub/session/abc/execute/sync?x=1", strings.NewReader(body))
	req.Header.Set("Origin", "")
	rec := serve(srv, req)
	assert.Equal(t, rec.Code, 200)
	assert.Equal(t, rec.Body.String(), reply)
	assert.Equal(t, rec.Header().Get("Content-Type"), wire.ContentType)
	assert.Equal(t, rec.Header().Get("X-Driver"), "yes")
	got := up.requests()
	assert.Equal(t, len(got), 1)
	assert.Equal(t, got[0].Method, "POST")
	assert.Equal(t, got[0].Path, "/session/abc/execute/sync")
	assert.Equal(t, string(got[0].Body), body)
}
