package chromium

// These tests run (*Engine).browser against a fake DevTools endpoint (an
// httptest server that accepts the websocket and answers nothing): no
// browser is needed.

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/chromium/cdp"
	"github.com/wdext/wdext/engine/chromium/cdp/cdptest"
	"github.com/wdext/wdext/wire"
)

// prompt bounds what must happen at once; far below the 10 s timeouts of
// the client a hang would run into.
const prompt = 2 * time.Second

// The fake DevTools endpoint of these tests (package cdptest): it answers
// no command.
type fakeDevTools = cdptest.Server

func newFakeDevTools(t *testing.T, version func(r *http.Request)) *fakeDevTools {
	t.Helper()
	return cdptest.NewServer(t, nil, version)
}

// bindFake binds an Engine to the fake the way a new session does, from
// the driver's capabilities.
func bindFake(t *testing.T, f *fakeDevTools) *Engine {
	t.Helper()
	eng, err := Bind(context.Background(), engine.NewSession{
		ID: "s1",
		Capabilities: map[string]any{
			"browserName":        "chrome",
			"goog:chromeOptions": map[string]any{"debuggerAddress": f.Addr()},
		},
	})
	assert.NilError(t, err)
	e, ok := eng.(*Engine)
	assert.Assert(t, ok, "%T", eng)
	assert.Check(t, is.Equal(e.DebuggerAddress(), f.Addr()))
	t.Cleanup(func() { e.Close() })
	return e
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), prompt)
	t.Cleanup(cancel)
	return ctx
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(prompt):
		t.Fatalf("%s: not after %v", what, prompt)
	}
}

func isInvalidSession(err error) bool {
	var we *wire.Error
	return errors.As(err, &we) && we.Code == wire.InvalidSessionID
}

// The first browser call dials; later ones reuse the connection.
func TestEngineBrowserDialsOnceAndReuses(t *testing.T) {
	f := newFakeDevTools(t, nil)
	e := bindFake(t, f)
	ctx := testContext(t)

	assert.Check(t, is.Equal(f.Dials.Load(), int32(0)), "Bind does not dial")
	b1, err := e.browser(ctx)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(f.Dials.Load(), int32(1)))
	for range 3 {
		b2, err := e.browser(ctx)
		assert.NilError(t, err)
		assert.Check(t, b1 == b2, "the same connection")
	}
	assert.Check(t, is.Equal(f.Dials.Load(), int32(1)))
	assert.Check(t, is.Equal(f.Versions.Load(), int32(1)))
}

// When the browser drops the websocket, the next browser call dials a new
// connection, and forgets the old connection's target sessions.
func TestEngineBrowserReconnects(t *testing.T) {
	f := newFakeDevTools(t, nil)
	e := bindFake(t, f)
	ctx := testContext(t)

	b1, err := e.browser(ctx)
	assert.NilError(t, err)
	ws1 := f.Accepted(t, prompt)
	e.mu.Lock()
	e.targets = map[target.ID]*targetSession{"page-1": nil}
	e.mu.Unlock()

	ws1.Kill()
	waitFor(t, b1.Done(), "the dropped connection's Done")

	b2, err := e.browser(ctx)
	assert.NilError(t, err)
	assert.Check(t, b2 != b1, "a new connection")
	assert.Check(t, !isDone(b2))
	assert.Check(t, is.Equal(f.Dials.Load(), int32(2)))
	f.Accepted(t, prompt)
	e.mu.Lock()
	assert.Check(t, is.Len(e.targets, 0), "the old connection's sessions are forgotten")
	e.mu.Unlock()

	b3, err := e.browser(ctx)
	assert.NilError(t, err)
	assert.Check(t, b3 == b2, "the new connection is kept")
	assert.Check(t, is.Equal(f.Dials.Load(), int32(2)))

	// And again, after a second crash.
	ws2 := f.Conns()[1]
	ws2.Kill()
	waitFor(t, b2.Done(), "the second connection's Done")
	b4, err := e.browser(ctx)
	assert.NilError(t, err)
	assert.Check(t, b4 != b2)
	assert.Check(t, is.Equal(f.Dials.Load(), int32(3)))
}

// Callers racing to reconnect all get the one connection kept; the extra
// connections are closed.
func TestEngineBrowserConcurrentDialsKeepOne(t *testing.T) {
	f := newFakeDevTools(t, nil)
	e := bindFake(t, f)
	ctx := testContext(t)

	const n = 8
	got := make([]*cdp.Browser, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			b, err := e.browser(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = b
		})
	}
	wg.Wait()
	for i := range n {
		assert.Check(t, got[i] == got[0], "caller %d got another connection", i)
	}
	assert.Check(t, !isDone(got[0]))

	// Every websocket but the kept one is closed by the client.
	dials := int(f.Dials.Load())
	assert.Check(t, dials >= 1 && dials <= n, "%d dials", dials)
	closed := 0
	deadline := time.After(prompt)
	for closed < dials-1 {
		closed = 0
		for _, c := range f.Conns() {
			select {
			case <-c.Gone:
				closed++
			default:
			}
		}
		select {
		case <-deadline:
			t.Fatalf("%d of %d extra connections closed", closed, dials-1)
		case <-time.After(time.Millisecond):
		}
	}
	assert.Check(t, is.Equal(closed, dials-1))
}

// After Close, browser fails with invalid session id and does not dial.
func TestEngineBrowserAfterClose(t *testing.T) {
	f := newFakeDevTools(t, nil)
	e := bindFake(t, f)
	ctx := testContext(t)

	b, err := e.browser(ctx)
	assert.NilError(t, err)
	ws := f.Accepted(t, prompt)
	assert.NilError(t, e.Close())
	assert.Check(t, isDone(b), "Close closes the connection")
	waitFor(t, ws.Gone, "the browser's side of the websocket")

	for range 2 {
		_, err = e.browser(ctx)
		assert.Check(t, isInvalidSession(err), "%v (%T)", err, err)
	}
	assert.Check(t, is.Equal(f.Dials.Load(), int32(1)))
	assert.NilError(t, e.Close(), "Close twice")

	// An engine closed before it ever dialed.
	e2 := bindFake(t, f)
	assert.NilError(t, e2.Close())
	_, err = e2.browser(ctx)
	assert.Check(t, isInvalidSession(err), "%v", err)
	assert.Check(t, is.Equal(f.Dials.Load(), int32(1)))
}

// A Close that happens while browser is dialing wins: the new connection
// is closed and the call fails with invalid session id.
func TestEngineBrowserCloseDuringDial(t *testing.T) {
	asked := make(chan struct{})
	release := make(chan struct{})
	f := newFakeDevTools(t, func(r *http.Request) {
		close(asked)
		<-release
	})
	e := bindFake(t, f)

	got := make(chan error, 1)
	go func() {
		_, err := e.browser(context.Background())
		got <- err
	}()
	waitFor(t, asked, "the dial's /json/version")
	assert.NilError(t, e.Close())
	close(release)
	select {
	case err := <-got:
		assert.Check(t, isInvalidSession(err), "%v (%T)", err, err)
	case <-time.After(prompt):
		t.Fatal("browser did not return")
	}
	ws := f.Accepted(t, prompt)
	waitFor(t, ws.Gone, "the connection dialed after Close is closed")
}

// An endpoint that never answers /json/version holds browser only as
// long as its context.
func TestEngineBrowserDialHonoursDeadline(t *testing.T) {
	release := make(chan struct{})
	f := newFakeDevTools(t, func(r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before the server's Close
	e := bindFake(t, f)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := e.browser(ctx)
	elapsed := time.Since(start)
	assert.Check(t, is.ErrorIs(err, context.DeadlineExceeded))
	assert.Check(t, is.ErrorContains(err, f.Addr()))
	assert.Check(t, elapsed < prompt, "took %v", elapsed)
	assert.Check(t, is.Equal(f.Dials.Load(), int32(0)))

	// The failed dial leaves nothing behind: the next call dials anew.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	_, err = e.browser(ctx2)
	assert.Check(t, err != nil)
	assert.Check(t, is.Equal(f.Versions.Load(), int32(2)))
}
