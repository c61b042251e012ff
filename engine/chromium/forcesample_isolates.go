package chromium

import (
	"context"
	"sync"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/wdext/wdext/engine/chromium/cdp"
)

type isolate struct {
	id      string // Runtime.getIsolateId's
	target  target.ID
	info    *target.Info
	session *cdp.Session
}

// isolateSessions attaches to the targets and keeps one per V8 isolate.
// Each must answer within probeTimeout: one that does not fails the force
// with its state (busy, a user prompt, …). Targets that went away, and
// crashed ones, have no profilers left and are left out, but for the page
// of the session's current window: its crash is the answer ("tab
// crashed"), as chromedriver's to any command there.
func (e *Engine) isolateSessions(ctx context.Context, b *cdp.Browser, targets []*target.Info) ([]isolate, error) {
	type found struct {
		isolate
		err error
	}
	res := make([]found, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() { // owned here: waited for below
			defer wg.Done()
			s, err := b.Attach(ctx, t.TargetID)
			if err != nil {
				res[i].err = err
				return
			}
			w := e.watch(ctx, s, t)
			defer w.stop()
			var id string
			err = w.quick(func(ctx context.Context) error {
				res, err := cdproto.Call(ctx, s, runtime.GetIsolateID, cdproto.Empty{})
				id = res.ID
				return err
			})
			if err != nil {
				if !keepSession(err) {
					b.Forget(t.TargetID)
				}
				res[i].err = err
				return
			}
			res[i] = found{isolate: isolate{id, t.TargetID, t, s}}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	seen := make(map[string]bool)
	var out []isolate
	crashed := map[string]error{} // pages, by target id
	for i, f := range res {
		switch k := stateOf(f.err); {
		case f.err == nil:
			if !seen[f.isolate.id] {
				seen[f.isolate.id] = true
				out = append(out, f.isolate)
			}
		case k == stateCrashed:
			if targets[i].Type == "page" {
				crashed[string(targets[i].TargetID)] = f.err
			}
		case k != 0 && k != stateGone:
			return nil, f.err
		}
		// Else the target went away between listing and attaching.
	}
	if len(crashed) > 0 {
		if handle, err := e.currentWindow(ctx); err == nil && crashed[handle] != nil {
			return nil, crashed[handle]
		}
	}
	return out, nil
}
