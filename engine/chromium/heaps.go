package chromium

import (
	"context"

	"github.com/chromedp/cdproto/target"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/chromium/cdp"
	"github.com/wdext/wdext/memory/census"
	"github.com/wdext/wdext/memory/heap"
	"github.com/wdext/wdext/memory/heapsnapshot"
)

// Heaps lists the V8 isolates of the current window: the page's, then
// (all) those of its out-of-process frames and workers, one per isolate.
func (e *Engine) Heaps(ctx context.Context, all bool) (_ []engine.Heap, err error) {
	defer func() { err = e.ended(ctx, err) }()
	b, err := e.browser(ctx)
	if err != nil {
		return nil, err
	}
	if !all {
		page, _, err := e.currentPage(ctx, b)
		if err != nil {
			return nil, engine.Failed("finding the current page", err)
		}
		return []engine.Heap{e.heap(b, page)}, nil
	}
	targets, err := e.isolateTargets(ctx, b)
	if err != nil {
		return nil, err
	}
	out := make([]engine.Heap, 0, len(targets))
	for _, it := range targets {
		if it.err != nil {
			out = append(out, engine.Heap{Type: it.t.Type, URL: it.t.URL, ID: string(it.t.TargetID), Err: it.err})
			continue
		}
		out = append(out, e.heap(b, it.t))
	}
	return out, nil
}

// isolateTarget is a target that stands for its isolate, or one that
// failed to say which isolate is its own (it went away meanwhile).
type isolateTarget struct {
	t   *target.Info
	err error
}

// isolateTargets lists the current window's page, then its out-of-process
// frames and workers, one per isolate (targets in one process share an
// isolate, hence a heap). The page's failure is the error.
func (e *Engine) isolateTargets(ctx context.Context, b *cdp.Browser) ([]isolateTarget, error) {
	page, below, err := e.currentPage(ctx, b)
	if err != nil {
		return nil, engine.Failed("finding the current page", err)
	}
	var out []isolateTarget
	seen := map[string]bool{}
	for _, t := range append([]*target.Info{page}, below...) {
		iso, err := e.isolate(ctx, b, t)
		if err != nil {
			if t == page || ctx.Err() != nil {
				return nil, err
			}
			out = append(out, isolateTarget{t: t, err: err})
			continue
		}
		if !seen[iso] {
			seen[iso] = true
			out = append(out, isolateTarget{t: t})
		}
	}
	return out, nil
}

// isolate names the target's V8 isolate; a target that does not answer
// is a page-state error (see watch.quick).
func (e *Engine) isolate(ctx context.Context, b *cdp.Browser, t *target.Info) (string, error) {
	ts, err := e.attach(ctx, b, t.TargetID)
	if err != nil {
		return "", engine.Failed("attaching to the target", err)
	}
	w := e.watch(ctx, ts.s, t)
	defer w.stop()
	var iso string
	err = w.quick(func(ctx context.Context) (err error) {
		iso, err = isolateID(ctx, ts)
		return err
	})
	if err != nil {
		e.forgetUnless(ts, err)
		return "", engine.Failed("identifying the target's isolate", err)
	}
	return iso, nil
}

// heap is the target's isolate as an engine.Heap: a snapshot of it, read
// as it streams in, once the target has shown that it answers; a crash or
// the target's end stops the snapshot at once.
func (e *Engine) heap(b *cdp.Browser, t *target.Info) engine.Heap {
	return engine.Heap{Type: t.Type, URL: t.URL, ID: string(t.TargetID), Snapshot: func(ctx context.Context) (_ heap.Heap, err error) {
		defer func() { err = e.ended(ctx, err) }()
		ts, err := e.attach(ctx, b, t.TargetID)
		if err != nil {
			return nil, engine.Failed("attaching to the target", err)
		}
		var snap *heapsnapshot.Snapshot
		err = e.onPage(ctx, ts.s, t, func(ctx context.Context) (err error) {
			snap, err = takeSnapshot(ctx, ts, heapsnapshot.ReadNodes)
			return err
		})
		if err != nil {
			e.forgetUnless(ts, err)
			return nil, engine.Failed("taking a heap snapshot", err)
		}
		return census.V8(snap), nil
	}}
}
