package webdriver_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

func guarded(t *testing.T) (*fakeUpstream, *webdriver.Server) {
	up := newFakeUpstream(t)
	srv := webdriver.NewServer(webdriver.Config{
		Upstream: driver.Remote{URL: up.url},
		Guard: webdriver.Guard{
			AllowedHosts:   []string{"wdext.internal"},
			AllowedOrigins: []string{"http://ok.example"},
			MaxBody:        1024,
		},
		Log: quietLog(),
	})
	return up, srv
}

// rejected checks a refusal: the W3C error code with its status, in the
// W3C envelope and content type, and nothing sent upstream.
func rejected(t *testing.T, up *fakeUpstream, rec *httptest.ResponseRecorder, code wire.ErrorCode, mentions string) {
	t.Helper()
	assert.Equal(t, rec.Code, code.Status(), "%s", rec.Body)
	assert.Equal(t, rec.Header().Get("Content-Type"), wire.ContentType)
	assertErrorShape(t, rec.Body.Bytes(), code)
	assert.Assert(t, strings.Contains(rec.Body.String(), mentions), "%s does not mention %q", rec.Body, mentions)
	assert.Equal(t, len(up.requests()), 0, "a rejected request went upstream")
}

func forwarded(t *testing.T, up *fakeUpstream, rec *httptest.ResponseRecorder) seen {
	t.Helper()
	assert.Equal(t, rec.Code, 200, "%s", rec.Body)
	reqs := up.requests()
	assert.Equal(t, len(reqs), 1)
	// What chromedriver insists on: a loopback Host and no Origin.
	assert.Equal(t, reqs[0].Host, up.url.Host)
	assert.Equal(t, reqs[0].Origin, "")
	return reqs[0]
}

func TestGuardHost(t *testing.T) {
	for _, host := range []string{"evil.example", "evil.example:4444", "127.0.0.1.evil.example", "localhost.evil.example", "wdext.internal.evil", ""} {
		t.Run("reject "+host, func(t *testing.T) {
			up, srv := guarded(t)
			req := httptest.NewRequest("GET", "/session/x/title", nil)
			req.Host = host
			rejected(t, up, serve(srv, req), wire.UnknownError, "host header")
		})
	}
	for _, host := range []string{"127.0.0.1:4444", "127.0.0.1", "[::1]:4444", "::1", "10.1.2.3:80", "localhost:4444", "LocalHost", "wdext.internal:4444", "WDEXT.internal"} {
		t.Run("accept "+host, func(t *testing.T) {
			up, srv := guarded(t)
			req := httptest.NewRequest("GET", "/session/x/title", nil)
			req.Host = host
			forwarded(t, up, serve(srv, req))
		})
	}
}

func TestGuardOrigin(t *testing.T) {
	for _, origin := range []string{"http://evil.example", "null", "http://ok.example:80", "https://ok.example", "http://127.0.0.1:4444"} {
		t.Run("reject "+origin, func(t *testing.T) {
			up, srv := guarded(t)
			req := httptest.NewRequest("GET", "/session/x/title", nil)
			req.Header.Set("Origin", origin)
			rejected(t, up, serve(srv, req), wire.UnknownError, "origin")
		})
	}
	t.Run("accept allowed, not passed on", func(t *testing.T) {
		up, srv := guarded(t)
		req := httptest.NewRequest("GET", "/session/x/title", nil)
		req.Header.Set("Origin", "http://ok.example")
		forwarded(t, up, serve(srv, req))
	})
	t.Run("no origin allowed by default", func(t *testing.T) {
		up := newFakeUpstream(t)
		srv := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: up.url}, Log: quietLog()})
		req := httptest.NewRequest("GET", "/session/x/title", nil)
		req.Header.Set("Origin", "http://ok.example")
		rejected(t, up, serve(srv, req), wire.UnknownError, "origin")
	})
}

// A POST of a type a form can send is refused from a browser (one that
// sends Origin or Sec-Fetch-*, even an allowed Origin: a page posts JSON
// as application/json) and taken as JSON from any other client: curl -d,
// Node's fetch of a string.
func TestGuardContentType(t *testing.T) {
	browser := map[string]func(*http.Request){
		"origin":     func(r *http.Request) { r.Header.Set("Origin", "http://ok.example") },
		"sec-fetch":  func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") },
		"sec-fetch2": func(r *http.Request) { r.Header.Set("Sec-Fetch-Mode", "no-cors") },
	}
	for _, ct := range []string{"text/plain", "Text/Plain; charset=utf-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
		for _, path := range []string{"/session", "/session/x/url", "/wd/hub/session/x/url"} {
			for name, from := range browser {
				t.Run("reject "+ct+" "+path+" "+name, func(t *testing.T) {
					up := newFakeUpstream(t)
					srv := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: up.url}, Log: quietLog(),
						Guard: webdriver.Guard{AllowedOrigins: []string{"http://ok.example"}}})
					req := httptest.NewRequest("POST", path, strings.NewReader(`{"url":"about:blank"}`))
					req.Header.Set("Content-Type", ct)
					from(req)
					rejected(t, up, serve(srv, req), wire.InvalidArgument, "content type")
				})
			}
		}
		t.Run("accept from a program "+ct, func(t *testing.T) {
			up, srv := guarded(t)
			req := httptest.NewRequest("POST", "/session/x/url", strings.NewReader(`{"url":"about:blank"}`))
			req.Header.Set("Content-Type", ct)
			got := forwarded(t, up, serve(srv, req))
			assert.Equal(t, string(got.Body), `{"url":"about:blank"}`)
		})
	}
	for _, ct := range []string{"", "application/json", "application/json; charset=utf-8"} {
		t.Run("accept "+ct, func(t *testing.T) {
			up, srv := guarded(t)
			req := httptest.NewRequest("POST", "/session/x/url", strings.NewReader(`{"url":"about:blank"}`))
			if ct != "" {
				req.Header.Set("Content-Type", ct)
			}
			got := forwarded(t, up, serve(srv, req))
			assert.Equal(t, string(got.Body), `{"url":"about:blank"}`)
		})
	}
	t.Run("only POST is checked", func(t *testing.T) {
		up, srv := guarded(t)
		req := httptest.NewRequest("GET", "/session/x/title", nil)
		req.Header.Set("Content-Type", "text/plain")
		forwarded(t, up, serve(srv, req))
	})
}

// Bodies over MaxBody are "invalid argument", whether the size is
// announced (Content-Length) or found out while reading (chunked).
func TestGuardMaxBody(t *testing.T) {
	big := `{"url":"` + strings.Repeat("x", 2048) + `"}`
	for _, path := range []string{"/session", "/session/x/url"} {
		t.Run("announced "+path, func(t *testing.T) {
			up, srv := guarded(t)
			req := httptest.NewRequest("POST", path, strings.NewReader(big))
			rejected(t, up, serve(srv, req), wire.InvalidArgument, "limit")
		})
		t.Run("chunked "+path, func(t *testing.T) {
			up, srv := guarded(t)
			hs := httptest.NewServer(srv)
			defer func() {
				assert.Assert(t, len(up.requests()) == 0 || path != "/session", "an oversized new session went upstream")
			}()
			defer hs.Close()
			// A reader of unknown length makes the client send it chunked.
			req, _ := http.NewRequest("POST", hs.URL+path, io.MultiReader(strings.NewReader(big)))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			assert.NilError(t, err)
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			assert.Equal(t, resp.StatusCode, 400, "%s", body)
			assert.Equal(t, resp.Header.Get("Content-Type"), wire.ContentType)
			assertErrorShape(t, body, wire.InvalidArgument)
			assert.Assert(t, bytes.Contains(body, []byte("limit")), "%s", body)
		})
	}
	t.Run("at the limit", func(t *testing.T) {
		up, srv := guarded(t)
		body := `{"url":"` + strings.Repeat("x", 1024-len(`{"url":""}`)) + `"}`
		req := httptest.NewRequest("POST", "/session/x/url", strings.NewReader(body))
		got := forwarded(t, up, serve(srv, req))
		assert.Equal(t, len(got.Body), 1024)
	})
}

// Origins compare as browsers serialise them: scheme and host in any
// case, the port exactly; an allowed entry's path is not part of it.
func TestGuardOriginCase(t *testing.T) {
	allowed := []string{"http://Other.example", "HTTPS://UPPER.example:8443", "http://slash.example/", "null"}
	for _, origin := range []string{"http://other.example", "http://OTHER.EXAMPLE", "https://upper.example:8443", "http://slash.example", "null"} {
		t.Run("accept "+origin, func(t *testing.T) {
			up := newFakeUpstream(t)
			srv := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: up.url}, Guard: webdriver.Guard{AllowedOrigins: allowed}, Log: quietLog()})
			req := httptest.NewRequest("GET", "/session/x/title", nil)
			req.Header.Set("Origin", origin)
			forwarded(t, up, serve(srv, req))
		})
	}
	for _, origin := range []string{"http://other.example:80", "https://other.example", "http://upper.example:8443", "https://upper.example", "http://other.example.evil", "http://evil.example/http://other.example", "NULL"} {
		t.Run("reject "+origin, func(t *testing.T) {
			up := newFakeUpstream(t)
			srv := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: up.url}, Guard: webdriver.Guard{AllowedOrigins: allowed}, Log: quietLog()})
			req := httptest.NewRequest("GET", "/session/x/title", nil)
			req.Header.Set("Origin", origin)
			rejected(t, up, serve(srv, req), wire.UnknownError, "origin")
		})
	}
}
