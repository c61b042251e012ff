package chromium

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/target"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/chromium/cdp"
	"github.com/wdext/wdext/internal/turn"
	"github.com/wdext/wdext/wire"
)

// Engine is a Chromium session's browser, reached through the Chrome
// DevTools Protocol at the debuggerAddress chromedriver announced.
type Engine struct {
	addr   string
	driver engine.Driver
	// stackSamples: the session asked for stack samples (stacksamples.go).
	stackSamples bool

	mu     sync.Mutex // guards the fields below; never held across I/O
	conn   *cdp.Browser
	closed bool
	// reached is set once a dial succeeded: an endpoint that stops
	// answering after that is a browser gone, not one wdext cannot reach.
	reached bool
	// targets are wdext's own flat sessions to targets, for heap
	// snapshots and trackers, made on conn (see targetSession).
	targets map[target.ID]*targetSession

	gc gcLog
}

// Bind is the engine.Binder of Chromium sessions: those whose driver
// announced a CDP endpoint (goog:chromeOptions.debuggerAddress).
func Bind(ctx context.Context, s engine.NewSession) (engine.Engine, error) {
	addr := DebuggerAddress(s.Capabilities)
	if addr == "" {
		return nil, errors.New("the driver reported no CDP endpoint (goog:chromeOptions.debuggerAddress): not a Chromium session")
	}
	e := &Engine{addr: addr, driver: s.Driver, gc: gcLog{turn: turn.New()}, stackSamples: s.StackSamples}
	if e.stackSamples {
		if err := e.traceStacks(ctx); err != nil {
			e.Close()
			return nil, fmt.Errorf("%s: %w", wire.StackSamplesCapability, err)
		}
	}
	return e, nil
}

// DebuggerAddress is the CDP endpoint (host:port) in a new-session reply's
// capabilities ("goog:chromeOptions", or another vendor's ":chromeOptions"),
// or "".
func DebuggerAddress(caps map[string]any) string {
	for k, v := range caps {
		if opts, ok := v.(map[string]any); ok && strings.HasSuffix(k, ":chromeOptions") {
			if a, ok := opts["debuggerAddress"].(string); ok {
				return a
			}
		}
	}
	return ""
}

// Name says what the engine is and where.
func (e *Engine) Name() string { return "Chromium (CDP at " + e.addr + ")" }

// DebuggerAddress is the browser's CDP endpoint.
func (e *Engine) DebuggerAddress() string { return e.addr }

// Close closes the CDP connection; later calls fail.
func (e *Engine) Close() error {
	e.mu.Lock()
	c := e.conn
	e.conn, e.closed, e.targets = nil, true, nil
	e.mu.Unlock()
	if c != nil {
		return c.Close()
	}
	return nil
}

// browser returns the CDP connection, dialing it on first use and again
// when it broke (the browser crashed or quit). The dial happens outside
// the lock; of two racing dials the first kept wins.
func (e *Engine) browser(ctx context.Context) (*cdp.Browser, error) {
	e.mu.Lock()
	c, closed := e.conn, e.closed
	e.mu.Unlock()
	if closed {
		return nil, wire.Errorf(wire.InvalidSessionID, "the session has ended")
	}
	if c != nil && !isDone(c) {
		return c, nil
	}
	conn, err := cdp.Dial(ctx, e.addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connecting to the browser's DevTools endpoint %s: %w", e.addr, err)
		}
		return nil, e.unreachable(ctx, err)
	}
	nb := cdp.NewBrowser(conn)
	kept, stale, err := e.install(c, nb)
	if stale != nil {
		stale.Close() // the loser of a race, or the broken one replaced
	}
	return kept, err
}

// install makes nb the connection unless the engine closed or another
// caller replaced old first; it returns the connection to use and the one
// to close (outside the lock).
func (e *Engine) install(old, nb *cdp.Browser) (kept, stale *cdp.Browser, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closed:
		return nil, nb, wire.Errorf(wire.InvalidSessionID, "the session has ended")
	case e.conn != nil && e.conn != old && !isDone(e.conn):
		return e.conn, nb, nil // another caller reconnected first
	}
	stale = e.conn
	e.conn, e.reached = nb, true
	// The sessions of the old connection went with it.
	e.targets = nil
	return nb, stale, nil
}

func isDone(b *cdp.Browser) bool {
	select {
	case <-b.Done():
		return true
	default:
		return false
	}
}

// unreachable is the error of a failed dial (err). The driver knows
// whether the browser is still there: when it answers GET /window with an
// error (chromedriver's "invalid session id" for a browser that exited, or
// "no such window"), that is the answer. Else an endpoint that answered
// before is a browser that stopped answering, a plain failure; one that
// never did is out of wdext's reach (a grid node's loopback address, say),
// which leaves the session without what the commands need.
func (e *Engine) unreachable(ctx context.Context, err error) error {
	e.mu.Lock()
	reached := e.reached
	e.mu.Unlock()
	if we := e.driverSays(ctx, reached); we != nil {
		return wire.Errorf(we.Code, "%s (the browser's DevTools endpoint %s does not answer: %v)", we.Message, e.addr, err)
	}
	if reached {
		return fmt.Errorf("the browser's DevTools endpoint %s no longer answers (did the browser exit?): %w", e.addr, err)
	}
	return wire.Errorf(wire.UnsupportedOperation, "cannot reach the browser's DevTools endpoint %s (goog:chromeOptions.debuggerAddress): %v", e.addr, err)
}

// lostGrace is how long a driver is given to notice that the browser
// went away (chromedriver answers "invalid session id" once it has seen
// its own DevTools connection drop, a moment after wdext may have).
const lostGrace = 2 * time.Second

// driverSays is the driver's W3C error for the session's current window
// (GET /window), asked when the browser's DevTools endpoint failed: nil
// when the driver serves the window (or cannot be asked). With wait, a
// driver that still serves it is asked again for up to lostGrace.
func (e *Engine) driverSays(ctx context.Context, wait bool) *wire.Error {
	if e.driver == nil {
		return nil
	}
	deadline := time.Now().Add(lostGrace)
	for {
		_, err := e.currentWindow(ctx)
		var we *wire.Error
		switch {
		case errors.As(err, &we) && we.Code != wire.Timeout:
			return we
		case err != nil || !wait || time.Now().After(deadline):
			return nil
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil
		}
	}
}

// ended maps the failure of a command whose browser or session went away
// under it: when Delete Session closed the engine (and with it the
// connection the command was using) it is "invalid session id"; when the
// connection broke on its own, the driver's answer for the window
// (chromedriver's "invalid session id" for a browser that exited), if it
// has one.
func (e *Engine) ended(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	var we *wire.Error
	switch {
	case closed && errors.As(err, &we) && we.Code == wire.InvalidSessionID:
		return we
	case closed:
		return wire.Errorf(wire.InvalidSessionID, "the session ended while the command ran (%v)", err)
	case errors.Is(err, cdp.ErrClosed) && ctx.Err() == nil:
		if we := e.driverSays(ctx, true); we != nil {
			return wire.Errorf(we.Code, "%s (the browser's DevTools connection closed: %v)", we.Message, err)
		}
	}
	return err
}

// currentWindow is the handle of the client's current window: with
// chromedriver, the page's CDP target id. The driver answers at once
// unless another command of the session holds it (chromedriver runs one
// at a time: a client's command waiting for a busy page, say), so the
// call is bounded by driverTimeout.
func (e *Engine) currentWindow(ctx context.Context) (string, error) {
	dctx, cancel := context.WithTimeout(ctx, driverTimeout)
	defer cancel()
	handle, err := engine.CurrentWindow(dctx, e.driver)
	if err != nil && ctx.Err() == nil && dctx.Err() != nil {
		return "", wire.Errorf(wire.Timeout,
			"the driver did not answer GET /session/{id}/window within %s: it is still busy with another command of the session (one waiting for a busy page?)", seconds(driverTimeout))
	}
	return handle, err
}

var (
	_ engine.Sampler           = (*Engine)(nil)
	_ engine.MemoryMeasurer    = (*Engine)(nil)
	_ engine.GarbageCollector  = (*Engine)(nil)
	_ engine.HeapSource        = (*Engine)(nil)
	_ engine.AllocationSampler = (*Engine)(nil)
	_ engine.GCLogger          = (*Engine)(nil)
	_ engine.LiveObjectTracker = (*Engine)(nil)
	_ engine.LeakTracker       = (*Engine)(nil)
	_ engine.AllLeakTracker    = (*Engine)(nil)
)
