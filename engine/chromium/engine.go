package chromium

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

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

	mu     sync.Mutex // guards the fields below; never held across I/O
	conn   *cdp.Browser
	closed bool
	// targets are wdext's own flat sessions to targets, for heap
	// snapshots and trackers, made on conn (see targetSession).
	targets map[target.ID]*targetSession

	gc gcLog
}

// Bind is the engine.Binder of Chromium sessions: those whose driver
// announced a CDP endpoint (goog:chromeOptions.debuggerAddress).
func Bind(_ context.Context, s engine.NewSession) (engine.Engine, error) {
	addr := DebuggerAddress(s.Capabilities)
	if addr == "" {
		return nil, errors.New("the driver reported no CDP endpoint (goog:chromeOptions.debuggerAddress): not a Chromium session")
	}
	return &Engine{addr: addr, driver: s.Driver, gc: gcLog{turn: turn.New()}}, nil
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
		// An endpoint wdext cannot reach (a grid node's loopback address,
		// say) leaves the session without what the commands need.
		return nil, wire.Errorf(wire.UnsupportedOperation, "cannot reach the browser's DevTools endpoint %s (goog:chromeOptions.debuggerAddress): %v", e.addr, err)
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
	e.conn = nb
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

// currentWindow is the handle of the client's current window: with
// chromedriver, the page's CDP target id.
func (e *Engine) currentWindow(ctx context.Context) (string, error) {
	return engine.CurrentWindow(ctx, e.driver)
}

var (
	_ engine.Sampler           = (*Engine)(nil)
	_ engine.MemoryMeasurer    = (*Engine)(nil)
	_ engine.GarbageCollector  = (*Engine)(nil)
	_ engine.HeapSource        = (*Engine)(nil)
	_ engine.AllocationSampler = (*Engine)(nil)
	_ engine.GCLogger          = (*Engine)(nil)
	_ engine.LiveObjectTracker = (*Engine)(nil)
)
