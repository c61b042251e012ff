package forcesample_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

// fakeDriver answers new session, and forcesample with the given reply.
func fakeDriver(t *testing.T, status int, forcesampleReply string) (*httptest.Server, *int) {
	calls := new(int)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch {
		case r.Method == "POST" && r.URL.Path == "/session":
			io.WriteString(w, `{"value":{"sessionId":"s1","capabilities":{"browserName":"fake"}}}`)
		case strings.HasSuffix(r.URL.Path, "/forcesample"):
			*calls++
			w.WriteHeader(status)
			io.WriteString(w, forcesampleReply)
		default:
			w.WriteHeader(404)
			io.WriteString(w, `{"value":{"error":"unknown command","message":"nope","stacktrace":""}}`)
		}
	}))
	t.Cleanup(s.Close)
	return s, calls
}

func wdext(t *testing.T, upstream string) string {
	u, _ := url.Parse(upstream)
	srv := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: u, Bind: chromium.Bind}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	forcesample.Register(srv)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	resp, err := http.Post(hs.URL+"/session", "application/json", strings.NewReader(`{"capabilities":{}}`))
	assert.NilError(t, err)
	resp.Body.Close()
	return hs.URL
}

func post(t *testing.T, u, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(u, "application/json", strings.NewReader(body))
	assert.NilError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	assert.Equal(t, resp.Header.Get("Content-Type"), wire.ContentType)
	return resp.StatusCode, string(b)
}

// An upstream that implements forcesample itself keeps answering it,
// untouched, every time.
func TestNativeForceSamplePassesThrough(t *testing.T) {
	up, calls := fakeDriver(t, 200, `{"value":{"native":true}}`)
	base := wdext(t, up.URL)
	for i := 0; i < 2; i++ {
		status, body := post(t, base+"/session/s1/forcesample", `{}`)
		assert.Equal(t, status, 200)
		assert.Equal(t, body, `{"value":{"native":true}}`)
	}
	assert.Equal(t, *calls, 2)

	// A native error (anything but unknown command) passes through too.
	up, _ = fakeDriver(t, 500, `{"value":{"error":"unknown error","message":"native failure","stacktrace":""}}`)
	base = wdext(t, up.URL)
	status, body := post(t, base+"/session/s1/forcesample", `{}`)
	assert.Equal(t, status, 500)
	assert.Assert(t, strings.Contains(body, "native failure"))
}

// Where the upstream says unknown command, wdext answers: asked once, then
// remembered. Without a CDP endpoint the answer is unsupported operation.
func TestForceSampleFallbackAndErrors(t *testing.T) {
	up, calls := fakeDriver(t, 404, `{"value":{"error":"unknown command","message":"unknown command","stacktrace":""}}`)
	base := wdext(t, up.URL)
	for i := 0; i < 2; i++ {
		status, body := post(t, base+"/session/s1/forcesample", `{}`)
		assert.Equal(t, status, 500, body)
		var e struct {
			Value struct{ Error, Message string }
		}
		assert.NilError(t, json.Unmarshal([]byte(body), &e))
		assert.Equal(t, e.Value.Error, "unsupported operation")
		assert.Assert(t, strings.Contains(e.Value.Message, "debuggerAddress"), e.Value.Message)
	}
	assert.Equal(t, *calls, 1)

	status, body := post(t, base+"/session/unknown/forcesample", `{}`)
	assert.Equal(t, status, 404)
	assert.Assert(t, strings.Contains(body, `"invalid session id"`))

	status, body = post(t, base+"/session/s1/forcesample", `not json`)
	assert.Equal(t, status, 400)
	assert.Assert(t, strings.Contains(body, `"invalid argument"`))

	resp, err := http.Get(base + "/session/s1/forcesample")
	assert.NilError(t, err)
	resp.Body.Close()
	assert.Equal(t, resp.StatusCode, 405)
}
