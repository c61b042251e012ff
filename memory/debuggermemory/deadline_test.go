package debuggermemory_test

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
	"github.com/wdext/wdext/memory/census"
	"github.com/wdext/wdext/memory/debuggermemory"
	"github.com/wdext/wdext/webdriver"
)

// A census whose heap snapshot never comes (a page busy in a loop, a
// crashed tab) stops at the server's command deadline with the W3C
// "timeout", and the session stays usable.
func TestCensusHungSnapshotTimesOut(t *testing.T) {
	post := fakeEngineServer(t, hungHeaps{}, 100*time.Millisecond)
	for range 2 {
		status, body := post("/session/s1/wdext/memory/census", `{}`)
		assert.Equal(t, status, 500, body)
		assert.Assert(t, strings.Contains(body, `"error":"timeout"`), body)
	}
}

// fakeEngineServer serves wdext with the Debugger.Memory commands in front
// of a fake driver whose one session, "s1", has engine e, and returns a
// function that posts a command to it.
func fakeEngineServer(t *testing.T, e engine.Engine, commandTimeout time.Duration) func(path, body string) (int, string) {
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
	debuggermemory.Register(srv)
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

// hungHeaps lists one heap whose snapshot waits for its context's end.
type hungHeaps struct{}

func (hungHeaps) Name() string { return "hung" }
func (hungHeaps) Close() error { return nil }
func (hungHeaps) Heaps(context.Context, bool) ([]engine.Heap, error) {
	return []engine.Heap{{Type: "page", Snapshot: func(ctx context.Context) (census.Heap, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}}, nil
}
