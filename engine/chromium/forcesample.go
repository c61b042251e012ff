package chromium

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/wdext/wdext/engine/chromium/cdp"
	"github.com/wdext/wdext/internal/turn"
)

// triggerLabel is the console.timeStamp label of the trigger run through
// a target: the trace tells each isolate's sample apart by it.
func triggerLabel(t target.ID) string { return "wdext forcesample " + string(t) }

// ForceSample forces a sample in every isolate of the browser.
func (e *Engine) ForceSample(ctx context.Context) (err error) {
	defer func() { err = e.ended(ctx, err) }()
	b, err := e.browser(ctx)
	if err != nil {
		return err
	}
	return e.forceSample(ctx, b)
}

// forcesOf is the turn of a browser's forces: one at a time, and the
// debuggers they leave on are turned off in it too.
func forcesOf(b *cdp.Browser) turn.Turn {
	type key struct{}
	v, _ := b.Values.LoadOrStore(key{}, turn.New())
	return v.(turn.Turn)
}

// forceSample finds the isolates first, warms the browser's tracing up
// when one is new and of no page (pagesOf), then pauses each one's main
// thread, arms, triggers one sample per isolate, disarms (page by page)
// and resumes (see the package doc, "Force Sample"). A
// target that does not answer (busy, in a dialog) would also hold the
// pause and the browser's Tracing.start, so it is found, and named,
// before either is asked for. While an isolate is paused its pages run
// no task, so nothing but the trigger calls into V8 there while tracing
// is on. The trace of the armed window is not read: nothing in it is
// needed (the tests read it, through package forcetrace).
func (e *Engine) forceSample(ctx context.Context, b *cdp.Browser) error {
	forces := forcesOf(b)
	if forces.Take(ctx) != nil {
		return fmt.Errorf("waiting for the session's previous force: %w", ctx.Err())
	}
	defer forces.Give()
	targets, err := b.Targets(ctx, "page", "iframe")
	if err != nil {
		return err
	}
	if e.stackSamples {
		return e.forceTraced(ctx, b, targets)
	}
	// One trigger per isolate: a second one in the same isolate (a
	// same-process window, say) would sample its profilers twice.
	isolates, err := e.isolateSessions(ctx, b, targets)
	if err != nil {
		return err
	}
	pages := pagesOf(targets)
	if slices.ContainsFunc(isolates, func(is isolate) bool { return pages[is.target] == "" }) {
		if err := e.warmUp(ctx, b, targets, isolates); err != nil {
			return err
		}
	}
	holds, err := e.holdAll(ctx, b, isolates)
	defer func() {
		// Always resume, even after a failure or cancellation: a page
		// left paused would never run again. Once sampleOnce is done,
		// the category is off in every renderer.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		releaseAll(rctx, b, holds)
	}()
	if err != nil {
		return err
	}
	return e.sampleOnce(ctx, b, pages, targets, holds)
}

// warmCategories are what a warm-up traces: a category no event has.
var warmCategories = []string{"wdext.warm-up"}

// warmUp traces once through the browser, sampling nothing, before a
// force samples through the browser (an isolate of no page: pagesOf) and
// pauses an isolate it has not traced yet. Measured: with the renderer
// just created (the page of a new site) and paused, the browser's
// Tracing.start did not complete in 10 of 40 fresh pages, 0 of 40 after
// a warm-up. A page's own trace needs none: no force on a fresh renderer
// took over 89 ms in 1,000 without one, two CPU hogs beside, none
// miscounted (BenchmarkForceSampleFreshRenderer).
func (e *Engine) warmUp(ctx context.Context, b *cdp.Browser, targets []*target.Info, isolates []isolate) error {
	type key struct{}
	v, _ := b.Values.LoadOrStore(key{}, &map[string]bool{})
	warm := v.(*map[string]bool) // changed in the browser's force turn only
	cold := false
	ids := make(map[string]bool, len(isolates))
	for _, is := range isolates {
		ids[is.id] = true
		cold = cold || !(*warm)[is.id]
	}
	if !cold {
		return nil
	}
	a, err := e.armChecked(ctx, b, b, targets, warmCategories)
	if err != nil {
		return err
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := a.disarm(dctx); err != nil {
		return err
	}
	*warm = ids
	return nil
}

// sampleOnce samples the isolates held, page by page (pagesOf): through
// each page's own session it arms, triggers one sample in each isolate of
// the page's frame tree, and disarms. Isolates of no page are sampled
// through the browser's session.
func (e *Engine) sampleOnce(ctx context.Context, b *cdp.Browser, pages map[target.ID]target.ID, targets []*target.Info, holds []*hold) error {
	var order []target.ID
	byPage := map[target.ID][]*hold{}
	for _, h := range holds {
		p := pages[h.is.target]
		if byPage[p] == nil {
			order = append(order, p)
		}
		byPage[p] = append(byPage[p], h)
	}
	var errs []error
	for _, p := range order {
		on := cdproto.Session(b)
		if p != "" {
			s, err := b.Attach(ctx, p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			on = s
		}
		errs = append(errs, e.sampleIn(ctx, b, on, targets, byPage[p]))
	}
	return errors.Join(errs...)
}

// sampleIn arms through the session on, triggers one sample in each
// isolate of holds, and disarms.
func (e *Engine) sampleIn(ctx context.Context, b *cdp.Browser, on cdproto.Session, targets []*target.Info, holds []*hold) error {
	a, err := e.armChecked(ctx, b, on, targets, sampleCategories)
	if err != nil {
		return err
	}
	errs := make([]error, len(holds))
	var wg sync.WaitGroup
	for i, h := range holds {
		wg.Add(1)
		go func() { // owned here: waited for below
			defer wg.Done()
			w, s := h.w, h.is.session
			if w == nil { // not paused (a failed force releases it)
				return
			}
			err := w.quick(func(ctx context.Context) error {
				return evaluateIn(ctx, s, h.dbg.world, "console.timeStamp("+jsString(h.label)+")")
			})
			errs[i] = triggerFailed(b, h.is, err)
		}()
	}
	wg.Wait()
	// Always disarm, even after a failure or cancellation: a category left
	// on would pollute every profile in the browser.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := a.disarm(dctx); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// triggerFailed is the error of an isolate's trigger: none when it
// worked, or when the target went away since it was found, or the
// document of the trigger's world was replaced while the isolate was
// paused (no profilers are left to sample there, and the new document's
// scripts have not run: measured on chromedriver's first data:, page,
// which committed during a new session's first force).
func triggerFailed(b *cdp.Browser, is isolate, err error) error {
	switch k := stateOf(err); {
	case err == nil, k == stateCrashed, k == stateGone, contextGone(err):
		return nil
	case !keepSession(err):
		b.Forget(is.target)
	}
	return err
}

// contextGone tells CDP's answer to an evaluation in an execution
// context that no longer exists: its document was replaced.
func contextGone(err error) bool {
	var ce *cdp.Error
	return errors.As(err, &ce) && strings.Contains(ce.Message, "Cannot find context with specified id")
}

// pagesOf maps each target to the page whose frame tree it is in (by
// parent, through out-of-process iframes), "" for none. A force traces
// page by page, through each page's own session: Chromium then enables
// the categories in the processes of that page's frame tree alone, and
// Tracing.start waits for no other renderer. Through the browser's
// session it waits for every renderer to start tracing, a spare renderer
// made for the next navigation and one going away included. Measured on
// Chromium 156, with a fresh renderer before each start: 22 of 60
// browser-wide starts took 10 s, 0 of 60 through the page (p50 21 ms
// against 7.5 ms).
func pagesOf(targets []*target.Info) map[target.ID]target.ID {
	byID := make(map[target.ID]*target.Info, len(targets))
	for _, t := range targets {
		byID[t.TargetID] = t
	}
	pages := make(map[target.ID]target.ID, len(targets))
	for _, t := range targets {
		for p, hops := t, 0; p != nil && hops <= len(targets); p, hops = byID[p.ParentID], hops+1 {
			if p.Type == "page" {
				pages[t.TargetID] = p.TargetID
				break
			}
		}
	}
	return pages
}

// armChecked arms, and when Tracing.start is late (probeTimeout: it
// takes milliseconds), probes the targets' main threads: one that stopped
// answering since they were found holds it, and its state is the answer.
// (Runtime.getIsolateId, which found them, is answered by an interrupt
// while a script runs: a busy page passes it.)
func (e *Engine) armChecked(ctx context.Context, b *cdp.Browser, on cdproto.Session, targets []*target.Info, categories []string) (*armed, error) {
	type result struct {
		a   *armed
		err error
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan result, 1)
	go func() { // owned here: waited for on every path below
		a, err := arm(actx, b, on, categories)
		done <- result{a, err}
	}()
	late := time.NewTimer(probeTimeout)
	defer late.Stop()
	select {
	case r := <-done:
		return r.a, r.err
	case <-late.C:
	}
	err := e.probeAll(ctx, b, targets)
	if _, ierr := e.isolateSessions(ctx, b, targets); ierr != nil && stateOf(ierr) != 0 {
		err = ierr // a crash of the current page, as isolateSessions tells it
	}
	if err != nil && stateOf(err) != 0 {
		cancel()
		if r := <-done; r.err == nil {
			dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer dcancel()
			_ = r.a.disarm(dctx)
		}
		return nil, err
	}
	r := <-done
	if r.err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("the browser did not start tracing (every page and frame answered, but a renderer starting or going away may hold it): %w", r.err)
	}
	return r.a, r.err
}

// evaluateIn evaluates expr in an execution context.
func evaluateIn(ctx context.Context, s *cdp.Session, world runtime.ExecutionContextID, expr string) error {
	res, err := cdproto.Call(ctx, s, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ContextID: world})
	if err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("evaluating %q: %s", expr, res.ExceptionDetails.Text)
	}
	return nil
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}
