package chromium

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/chromedp/cdproto/target"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/chromium/cdp"
)

// targetSession is wdext's own flat CDP session to a target, for heap
// snapshots and trackers. It is not the one cdp.Browser.Attach caches for
// short commands: heap snapshot chunks arrive as events of the session
// that asked, and two snapshots on one session would interleave theirs.
type targetSession struct {
	id   target.ID
	b    *cdp.Browser // the connection s is on
	s    *cdp.Session
	snap sync.Mutex // one heap snapshot at a time
}

// attach returns wdext's own session to target id on b, attaching on
// first use. The attach itself runs without the engine's lock.
func (e *Engine) attach(ctx context.Context, b *cdp.Browser, id target.ID) (*targetSession, error) {
	e.mu.Lock()
	ts, ok := e.targets[id]
	e.mu.Unlock()
	if ok {
		return ts, nil
	}
	s, err := b.AttachSession(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("attaching to target %s: %w", id, err)
	}
	ts = &targetSession{id: id, b: b, s: s}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conn != b {
		return ts, nil // the connection was replaced meanwhile: don't keep it
	}
	if old, ok := e.targets[id]; ok {
		return old, nil
	}
	if e.targets == nil {
		e.targets = map[target.ID]*targetSession{}
	}
	e.targets[id] = ts
	return ts, nil
}

// forget drops the session to a target that failed (closed, crashed).
func (e *Engine) forget(ts *targetSession) {
	e.mu.Lock()
	if e.targets[ts.id] == ts {
		delete(e.targets, ts.id)
	}
	e.mu.Unlock()
}

// forgetUnless drops the session after a failure that leaves it unusable
// (see keepSession).
func (e *Engine) forgetUnless(ts *targetSession, err error) {
	if !keepSession(err) {
		e.forget(ts)
	}
}

// attachCurrentPage gives a dedicated session to the page of the
// session's current window, and the page's target.
func (e *Engine) attachCurrentPage(ctx context.Context) (*targetSession, *target.Info, error) {
	b, err := e.browser(ctx)
	if err != nil {
		return nil, nil, err
	}
	page, _, err := e.currentPage(ctx, b)
	if err != nil {
		return nil, nil, engine.Failed("finding the current page", err)
	}
	ts, err := e.attach(ctx, b, page.TargetID)
	if err != nil {
		return nil, nil, engine.Failed("attaching to the page", err)
	}
	return ts, page, nil
}

// currentPage finds the page target of the session's current window, and
// the out-of-process iframes and workers below it.
func (e *Engine) currentPage(ctx context.Context, b *cdp.Browser) (*target.Info, []*target.Info, error) {
	handle, err := e.currentWindow(ctx)
	if err != nil {
		return nil, nil, err
	}
	page, below, err := b.PageTree(ctx, handle)
	var np *cdp.NoPageError
	if errors.As(err, &np) {
		return nil, nil, noPage(np)
	}
	return page, below, err
}
