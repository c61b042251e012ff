package e2e

import (
	"context"
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
	"github.com/wdext/wdext/webdriver"
)

// FakeEngineServer serves wdext, with the extension commands register
// adds, in front of a fake driver whose one session, "s1", has engine e
// (for error paths a real browser cannot be made to take), and returns a
// function that posts a command to it and gives the status and body. The
// session exists when it returns.
func FakeEngineServer(t testing.TB, e engine.Engine, commandTimeout time.Duration, register func(*webdriver.Server)) func(path, body string) (int, string) {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, `{"value":{"sessionId":"s1","capabilities":{"browserName":"fake"}}}`)
	}))
	t.Cleanup(up.Close)
	u, _ := url.Parse(up.URL)
	bind := func(context.Context, engine.NewSession) (engine.Engine, error) { return e, nil }
	srv := webdriver.NewServer(webdriver.Config{
		Upstream:       driver.Remote{URL: u, Bind: bind},
		Log:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		CommandTimeout: commandTimeout,
	})
	register(srv)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	post := func(path, body string) (int, string) {
		resp, err := http.Post(hs.URL+path, "application/json", strings.NewReader(body))
		assert.NilError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := post("/session", `{}`)
	assert.Equal(t, status, 200, body)
	return post
}
