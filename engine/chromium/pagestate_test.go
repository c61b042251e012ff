package chromium

// These tests run the engine's page-state checks against a fake DevTools
// endpoint (package cdptest) that plays a page in each state, and a fake
// driver: no browser is needed. The e2e tests of memory/debuggermemory and
// forcesample check the same against Chromium.

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/chromium/cdp/cdptest"
	"github.com/wdext/wdext/wire"
)

// pageID is the fake page's target id, and the fake driver's window
// handle: chromedriver's handles are target ids.
const pageID = "0123456789ABCDEF0123456789ABCDEF"

// fakeDriver answers the engine's own driver calls: GET /window and GET
// /alert/text.
type fakeDriver struct {
	mu        sync.Mutex
	window    string
	windowErr error
	alert     *string // nil: "no such alert"
	calls     []string
}

func (d *fakeDriver) Do(ctx context.Context, method, path string, params, value any) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, method+" "+path)
	switch path {
	case "window":
		if d.windowErr != nil {
			return d.windowErr
		}
		*value.(*string) = d.window
		return nil
	case "alert/text":
		if d.alert == nil {
			return wire.Errorf(wire.NoSuchAlert, "no such alert")
		}
		*value.(**string) = d.alert
		return nil
	}
	return wire.Errorf(wire.UnknownCommand, "%s %s", method, path)
}

func (d *fakeDriver) asked(path string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.calls {
		if strings.HasSuffix(c, " "+path) {
			return true
		}
	}
	return false
}

// pageState is how the fake page behaves: "healthy" answers everything;
// "dialog" and "blocked" answer nothing its renderer would, "busy" only
// what Chromium answers by a V8 interrupt (Performance.getMetrics);
// "crashed" also says so when Inspector.enable is sent; "closed" detaches
// the session at the first renderer command.
type pageState string

func fakePage(t *testing.T, state pageState) *fakeDevTools {
	t.Helper()
	return cdptest.NewServer(t, func(c *cdptest.Conn, req cdptest.Request) {
		switch {
		case req.Method == "Target.getTargets":
			c.Reply(req, map[string]any{"targetInfos": []map[string]any{
				{"targetId": pageID, "type": "page", "title": "t", "url": "http://example.test/page.html", "attached": true, "canAccessOpener": false},
			}})
		case req.Method == "Target.attachToTarget":
			c.Reply(req, map[string]any{"sessionId": "S1"})
		case state == "closed" && req.SessionID != "" && req.Method != "Inspector.enable":
			c.Event(req.SessionID, "Inspector.detached", map[string]any{"reason": "target_closed"})
		case req.Method == "Inspector.enable":
			if state == "crashed" {
				c.Event(req.SessionID, "Inspector.targetCrashed", map[string]any{})
			}
			c.Reply(req, map[string]any{})
		case state == "busy" && req.Method == "Performance.getMetrics":
			c.Reply(req, map[string]any{"metrics": []any{}})
		case state == "healthy" && req.Method == "Runtime.getIsolateId":
			c.Reply(req, map[string]any{"id": "iso-1"})
		case state == "healthy" && req.Method == "Runtime.evaluate":
			c.Reply(req, map[string]any{"result": map[string]any{"type": "number", "value": 1}})
		}
	}, nil)
}

// bindWith binds an Engine to the fake with driver d.
func bindWith(t *testing.T, addr string, d engine.Driver) *Engine {
	t.Helper()
	eng, err := Bind(context.Background(), engine.NewSession{
		ID:           "s1",
		Capabilities: map[string]any{"goog:chromeOptions": map[string]any{"debuggerAddress": addr}},
		Driver:       d,
	})
	assert.NilError(t, err)
	e := eng.(*Engine)
	t.Cleanup(func() { e.Close() })
	return e
}

// shortProbes makes the probes of the test fast.
func shortProbes(t *testing.T) {
	p, i := probeTimeout, interruptTimeout
	probeTimeout, interruptTimeout = 200*time.Millisecond, 200*time.Millisecond
	t.Cleanup(func() { probeTimeout, interruptTimeout = p, i })
}

func codeOf(err error) wire.ErrorCode {
	var we *wire.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return ""
}

// Every command of the engine on a page in a bad state answers within the
// probe's time with the state's W3C error; the driver is asked for a user
// prompt only when the page's renderer is idle.
func TestPageStates(t *testing.T) {
	shortProbes(t)
	hello := "hello there"
	for _, tc := range []struct {
		state     pageState
		alert     *string
		code      wire.ErrorCode
		says      string
		askDriver bool
	}{
		{"busy", nil, wire.Timeout, "main thread is busy: a script has been running for more than 0.2 s", false},
		{"dialog", &hello, wire.UnexpectedAlertOpen, `user prompt open ("hello there")`, true},
		{"blocked", nil, wire.Timeout, "runs no script that wdext can see: its main thread is blocked", true},
		{"crashed", nil, TabCrashed, "tab crashed: the renderer of the page http://example.test/page.html is gone", false},
		{"closed", nil, wire.NoSuchWindow, "the window was closed", false},
	} {
		t.Run(string(tc.state), func(t *testing.T) {
			for _, c := range []struct {
				name string
				run  func(ctx context.Context, e *Engine) error
			}{
				{"census", func(ctx context.Context, e *Engine) error {
					heaps, err := e.Heaps(ctx, false)
					if err != nil {
						return err
					}
					_, err = heaps[0].Snapshot(ctx)
					return err
				}},
				{"census all", func(ctx context.Context, e *Engine) error {
					_, err := e.Heaps(ctx, true)
					return err
				}},
				{"allocations", func(ctx context.Context, e *Engine) error {
					_, err := e.SampleAllocations(ctx, 1)
					return err
				}},
				{"live objects", func(ctx context.Context, e *Engine) error {
					_, err := e.StartLiveObjects(ctx)
					return err
				}},
				{"measure", func(ctx context.Context, e *Engine) error {
					_, err := e.MeasureMemory(ctx, wire.SourceEngine)
					return err
				}},
				{"gc", func(ctx context.Context, e *Engine) error {
					_, err := e.CollectGarbage(ctx)
					return err
				}},
				{"forcesample", func(ctx context.Context, e *Engine) error { return e.ForceSample(ctx) }},
			} {
				if tc.state == "closed" && c.name == "forcesample" {
					continue // a window gone since the listing has no profilers: nothing to fail
				}
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					d := &fakeDriver{window: pageID, alert: tc.alert}
					e := bindWith(t, fakePage(t, tc.state).Addr(), d)
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					start := time.Now()
					err := c.run(ctx, e)
					took := time.Since(start)
					assert.Check(t, is.Equal(codeOf(err), tc.code), "%v", err)
					assert.Check(t, is.ErrorContains(err, tc.says))
					assert.Check(t, took < 2*time.Second, "took %v", took)
					assert.Check(t, is.Equal(d.asked("alert/text"), tc.askDriver))
				})
			}
		})
	}
}

// A healthy page is not held up: the quick calls answer, and no driver
// call but GET /window is made.
func TestPageStateHealthy(t *testing.T) {
	d := &fakeDriver{window: pageID}
	e := bindWith(t, fakePage(t, "healthy").Addr(), d)
	heaps, err := e.Heaps(testContext(t), true)
	assert.NilError(t, err)
	assert.Check(t, is.Len(heaps, 1))
	assert.Check(t, !d.asked("alert/text"))
}

// A crashed tab that is not the session's current window does not fail a
// force: it has no profilers left to sample.
func TestForceSampleSkipsOtherCrashedTab(t *testing.T) {
	shortProbes(t)
	d := &fakeDriver{window: "FEDCBA9876543210FEDCBA9876543210"}
	e := bindWith(t, fakePage(t, "crashed").Addr(), d)
	// No isolate is left to sample, so nothing is traced (arming would
	// answer nothing in this fake).
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	assert.NilError(t, e.ForceSample(ctx))
}

// The current window the driver names has no page target (it was closed,
// or the browser has no page left): "no such window", not "unsupported
// operation". A driver whose handles are not target ids, with several
// pages, is still "unsupported operation".
func TestCurrentPageWithoutTarget(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pages   int
		handle  string
		code    wire.ErrorCode
		message string
	}{
		{"closed window", 1, "FEDCBA9876543210FEDCBA9876543210", wire.NoSuchWindow, "it was closed"},
		{"no page left", 0, "some-handle", wire.NoSuchWindow, "it was closed"},
		{"handles are not target ids", 2, "some-handle", wire.UnsupportedOperation, "not CDP target ids"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := cdptest.NewServer(t, func(c *cdptest.Conn, req cdptest.Request) {
				if req.Method != "Target.getTargets" {
					return
				}
				infos := []map[string]any{}
				for i := range tc.pages {
					infos = append(infos, map[string]any{"targetId": strings.Repeat(string(rune('A'+i)), 32), "type": "page", "url": "http://example.test/"})
				}
				c.Reply(req, map[string]any{"targetInfos": infos})
			}, nil)
			e := bindWith(t, f.Addr(), &fakeDriver{window: tc.handle})
			_, err := e.Heaps(testContext(t), false)
			assert.Check(t, is.Equal(codeOf(err), tc.code), "%v", err)
			assert.Check(t, is.ErrorContains(err, tc.message))
			_, err = e.MeasureMemory(testContext(t), wire.SourceEngine)
			assert.Check(t, is.Equal(codeOf(err), tc.code), "%v", err)
		})
	}
}

// deadAddr is a debuggerAddress where nothing listens.
func deadAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	addr := l.Addr().String()
	l.Close()
	return addr
}

// A DevTools endpoint that does not answer is a browser gone when the
// driver says so ("invalid session id"), or when it answered before; only
// one never reached, with the driver still serving the window, is out of
// wdext's reach ("unsupported operation").
func TestDialFailure(t *testing.T) {
	t.Run("driver says the session ended", func(t *testing.T) {
		ctx := testContext(t)
		d := &fakeDriver{windowErr: wire.Errorf(wire.InvalidSessionID, "session deleted as the browser has closed the connection")}
		e := bindWith(t, deadAddr(t), d)
		err := e.ForceSample(ctx)
		assert.Check(t, is.Equal(codeOf(err), wire.InvalidSessionID), "%v", err)
		assert.Check(t, is.ErrorContains(err, "browser has closed the connection"))
	})
	t.Run("reached before", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*lostGrace)
		defer cancel()
		f := newFakeDevTools(t, nil)
		d := &fakeDriver{window: pageID}
		e := bindWith(t, f.Addr(), d)
		b, err := e.browser(ctx)
		assert.NilError(t, err)
		e.addr = deadAddr(t) // the browser is gone, and its port with it
		f.Accepted(t, prompt).Kill()
		waitFor(t, b.Done(), "the dropped connection")
		_, err = e.browser(ctx)
		assert.Check(t, err != nil)
		assert.Check(t, is.Equal(codeOf(err), wire.ErrorCode("")), "a plain failure, not %v", err)
		assert.Check(t, is.ErrorContains(err, "no longer answers"))
	})
	t.Run("never reached", func(t *testing.T) {
		ctx := testContext(t)
		e := bindWith(t, deadAddr(t), &fakeDriver{window: pageID})
		_, err := e.browser(ctx)
		assert.Check(t, is.Equal(codeOf(err), wire.UnsupportedOperation), "%v", err)
	})
}

// A command under way when the engine closes (Delete Session) answers
// "invalid session id".
func TestCloseDuringCommand(t *testing.T) {
	asked := make(chan struct{}, 1)
	f := cdptest.NewServer(t, func(c *cdptest.Conn, req cdptest.Request) {
		if req.Method == "Target.getTargets" {
			select {
			case asked <- struct{}{}:
			default:
			}
		}
	}, nil)
	e := bindWith(t, f.Addr(), &fakeDriver{window: pageID})
	got := make(chan error, 1)
	go func() { got <- e.ForceSample(context.Background()) }()
	select {
	case <-asked:
	case <-time.After(prompt):
		t.Fatal("the force never listed the targets")
	}
	assert.NilError(t, e.Close())
	select {
	case err := <-got:
		assert.Check(t, is.Equal(codeOf(err), wire.InvalidSessionID), "%v", err)
	case <-time.After(prompt):
		t.Fatal("the force did not return after Close")
	}
}

// A driver that holds GET /window (busy with another command of the
// session) fails the engine's call after driverTimeout, as "timeout".
func TestCurrentWindowBounded(t *testing.T) {
	d := driverFunc(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	old := driverTimeout
	driverTimeout = 100 * time.Millisecond
	t.Cleanup(func() { driverTimeout = old })
	e := bindWith(t, newFakeDevTools(t, nil).Addr(), d)
	_, err := e.currentWindow(testContext(t))
	assert.Check(t, is.Equal(codeOf(err), wire.Timeout), "%v", err)
	assert.Check(t, is.ErrorContains(err, "GET /session/{id}/window"))
}

type driverFunc func(ctx context.Context) error

func (f driverFunc) Do(ctx context.Context, _, _ string, _, _ any) error { return f(ctx) }

// A command whose DevTools connection breaks under it (the browser was
// killed) answers what the driver says of the session, once it noticed:
// chromedriver's "invalid session id".
func TestBrowserGoneDuringCommand(t *testing.T) {
	asked := make(chan *cdptest.Conn, 1)
	f := cdptest.NewServer(t, func(c *cdptest.Conn, req cdptest.Request) {
		if req.Method == "Target.getTargets" {
			select {
			case asked <- c:
			default:
			}
		}
	}, nil)
	d := &fakeDriver{window: pageID}
	e := bindWith(t, f.Addr(), d)
	got := make(chan error, 1)
	go func() { got <- e.ForceSample(context.Background()) }()
	var c *cdptest.Conn
	select {
	case c = <-asked:
	case <-time.After(prompt):
		t.Fatal("the force never listed the targets")
	}
	c.Kill()
	// The driver notices a moment later.
	time.Sleep(300 * time.Millisecond)
	d.mu.Lock()
	d.windowErr = wire.Errorf(wire.InvalidSessionID, "session deleted as the browser has closed the connection")
	d.mu.Unlock()
	select {
	case err := <-got:
		assert.Check(t, is.Equal(codeOf(err), wire.InvalidSessionID), "%v", err)
		assert.Check(t, is.ErrorContains(err, "browser has closed the connection"))
	case <-time.After(prompt):
		t.Fatal("the force did not return")
	}
}

// A page that stops answering between the force's check and its
// Tracing.start (which it then holds) is found by a second check, once
// the start is late: its state is the answer, not the deadline's.
func TestForceSamplePageTurnsBusy(t *testing.T) {
	shortProbes(t)
	var mu sync.Mutex
	answered := 0
	f := cdptest.NewServer(t, func(c *cdptest.Conn, req cdptest.Request) {
		switch req.Method {
		case "Target.getTargets":
			c.Reply(req, map[string]any{"targetInfos": []map[string]any{
				{"targetId": pageID, "type": "page", "url": "http://example.test/page.html"},
			}})
		case "Target.attachToTarget":
			c.Reply(req, map[string]any{"sessionId": "S1"})
		case "Inspector.enable":
			c.Reply(req, map[string]any{})
		case "Runtime.getIsolateId":
			mu.Lock()
			first := answered == 0
			answered++
			mu.Unlock()
			if first {
				c.Reply(req, map[string]any{"id": "iso-1"})
			}
		case "Performance.getMetrics": // by an interrupt: a script runs
			c.Reply(req, map[string]any{"metrics": []any{}})
		}
		// Tracing.start: never answered, as with a busy renderer.
	}, nil)
	e := bindWith(t, f.Addr(), &fakeDriver{window: pageID})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	began := time.Now()
	err := e.ForceSample(ctx)
	assert.Check(t, is.Equal(codeOf(err), wire.Timeout), "%v", err)
	assert.Check(t, is.ErrorContains(err, "main thread is busy"))
	assert.Check(t, time.Since(began) < 2*time.Second, "took %v", time.Since(began))
}
