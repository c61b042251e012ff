package chromium

import (
	"context"
	"errors"
	"time"

	"github.com/chromedp/cdproto/target"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/chromium/cdp"
	"github.com/wdext/wdext/wire"
)

// allLeakTracking is a leak check in each isolate of a page: the page's
// first, then those of its out-of-process frames and workers.
type allLeakTracking struct {
	e      *Engine
	checks []isolateCheck
}

// isolateCheck is one isolate's check, or why it has none.
type isolateCheck struct {
	t   *target.Info
	l   *leakTracking // nil when err is set
	err error
}

// StartAllLeaks starts a check in every isolate of the current window's
// page, as StartLeaks does in the page's. A frame or worker that fails
// (it went away meanwhile) has no check; the page's failure fails all.
func (e *Engine) StartAllLeaks(ctx context.Context) (_ engine.AllLeakTracking, err error) {
	defer func() { err = e.ended(ctx, err) }()
	b, err := e.browser(ctx)
	if err != nil {
		return nil, err
	}
	targets, err := e.isolateTargets(ctx, b)
	if err != nil {
		return nil, err
	}
	a := &allLeakTracking{e: e}
	for i, it := range targets {
		c := isolateCheck{t: it.t, err: it.err}
		if c.err == nil {
			ts, err := e.attach(ctx, b, it.t.TargetID)
			if err != nil {
				c.err = engine.Failed("leaks/start: attaching to the target", err)
			} else {
				c.l, c.err = e.startLeaks(ctx, ts, it.t)
			}
		}
		if c.err != nil && a.fatal(ctx, i, c.err) {
			abandon(ctx, a.checks)
			return nil, c.err
		}
		a.checks = append(a.checks, c)
	}
	now := time.Now()
	for _, c := range a.checks {
		if c.l != nil {
			c.l.began = now
		}
	}
	return a, nil
}

// fatal tells a failure that ends the whole check: the page's, the
// command's deadline, the DevTools connection's or the session's end.
func (a *allLeakTracking) fatal(ctx context.Context, i int, err error) bool {
	a.e.mu.Lock()
	closed := a.e.closed
	a.e.mu.Unlock()
	return i == 0 || ctx.Err() != nil || closed || errors.Is(err, cdp.ErrClosed)
}

// MarkIteration marks the end of an iteration in every isolate's check,
// all from the same moment.
func (a *allLeakTracking) MarkIteration(ctx context.Context) error {
	at := time.Now()
	for _, c := range a.checks {
		if c.l != nil {
			c.l.markAt(ctx, at)
		}
	}
	return nil
}

// Stop checks that the current window is the page of the start, then
// ends every isolate's check in turn.
func (a *allLeakTracking) Stop(ctx context.Context, iterations int) (_ wire.AllLeaks, err error) {
	defer func() { err = a.e.ended(ctx, err) }()
	stopped := time.Now()
	if err := a.checks[0].l.sameWindow(ctx); err != nil {
		abandon(ctx, a.checks)
		return wire.AllLeaks{}, err
	}
	out := wire.AllLeaks{Iterations: iterations, Targets: make([]wire.TargetLeaks, 0, len(a.checks))}
	for i, c := range a.checks {
		tl := wire.TargetLeaks{Type: c.t.Type, URL: c.t.URL, TargetID: string(c.t.TargetID)}
		err := c.err
		if err == nil {
			var r wire.LeakReport
			if r, err = c.l.finish(ctx, iterations, stopped); err == nil {
				tl.Report = &r
			}
		}
		if err != nil {
			if a.fatal(ctx, i, err) {
				abandon(ctx, a.checks[i+1:])
				return wire.AllLeaks{}, err
			}
			tl.Error = err.Error()
		}
		out.Targets = append(out.Targets, tl)
	}
	return out, nil
}

// abandonTimeout bounds stopping the trackers of a check that cannot
// finish, even when the command ran out of time.
const abandonTimeout = 10 * time.Second

// abandon stops the allocation trackers of checks that a failed start or
// stop leaves running.
func abandon(ctx context.Context, checks []isolateCheck) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonTimeout)
	defer cancel()
	for _, c := range checks {
		if c.l != nil {
			c.l.abandon(ctx)
		}
	}
}
