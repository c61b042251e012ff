package chromium

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/wdext/wdext/engine/chromium/cdp"
)

// triggerLabel is the console.timeStamp label of the trigger run through
// a target: the trace tells each isolate's sample apart by it.
func triggerLabel(t target.ID) string { return "wdext forcesample " + string(t) }

// ForceReport is what one force on Chromium did, read from the trace of
// its armed window: for tests and diagnostics (ObserveForces).
type ForceReport struct {
	// Isolates is the number of V8 isolates sampled (one trigger each).
	Isolates int
	// Took is the whole force: Found, then Warm, then Held.
	Took time.Duration
	// Found is how long finding the isolates took, Warm the warm-up trace
	// (next to nothing when none was needed).
	Found, Warm time.Duration
	// Window is how long the browser traced: Tracing.start sent to
	// tracingComplete received.
	Window time.Duration
	// Held is how long the isolates' main threads were paused.
	Held time.Duration
	// Samples is the number of triggers the trace shows. A paused
	// thread's last events may be missing from the trace (they are
	// sampled all the same), so it may be below Isolates.
	Samples int
	// Strays are the other sampling events the trace shows on the main
	// threads of the sampled isolates ("FunctionCall tick
	// http://…/page.js"): samples that were not the force's.
	Strays []string
	// Verified is false when the trace was not read whole (data loss, a
	// flush that outlasted the command).
	Verified bool
	// Err is the force's error, if it failed.
	Err error
}

var forceObserver atomic.Pointer[func(ForceReport)]

// ObserveForces calls f with the report of every force on Chromium (of
// every session) until stop is called. One observer at a time.
func ObserveForces(f func(ForceReport)) (stop func()) {
	forceObserver.Store(&f)
	return func() { forceObserver.CompareAndSwap(&f, nil) }
}

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
func forcesOf(b *cdp.Browser) chan struct{} {
	type key struct{}
	v, _ := b.Values.LoadOrStore(key{}, make(chan struct{}, 1))
	return v.(chan struct{})
}

// forceSample finds the isolates first, warms tracing up when one is
// new, then pauses each one's main thread, arms, triggers one sample per
// isolate, disarms and resumes (see the package doc, "Force Sample"). A
// target that does not answer (busy, in a dialog) would also hold the
// pause and the browser's Tracing.start, so it is found, and named,
// before either is asked for. While an isolate is paused its pages run
// no task, so nothing but the trigger calls into V8 there while tracing
// is on.
func (e *Engine) forceSample(ctx context.Context, b *cdp.Browser) (err error) {
	turn := forcesOf(b)
	select {
	case turn <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("waiting for the session's previous force: %w", ctx.Err())
	}
	defer func() { <-turn }()
	began := time.Now()
	rep := ForceReport{}
	report := func(err error) error {
		rep.Took, rep.Err = time.Since(began), err
		if f := forceObserver.Load(); f != nil {
			(*f)(rep)
		}
		return err
	}
	targets, err := b.Targets(ctx, "page", "iframe")
	if err != nil {
		return report(err)
	}
	// One trigger per isolate: a second one in the same isolate (a
	// same-process window, say) would sample its profilers twice.
	isolates, err := e.isolateSessions(ctx, b, targets)
	rep.Found, rep.Isolates = time.Since(began), len(isolates)
	if err != nil {
		return report(err)
	}
	warm := time.Now()
	if err := e.warmUp(ctx, b, targets, isolates); err != nil {
		rep.Warm = time.Since(warm)
		return report(err)
	}
	rep.Warm = time.Since(warm)
	held := time.Now()
	holds, err := e.holdAll(ctx, b, isolates)
	var releaseOnce sync.Once
	release := func() {
		releaseOnce.Do(func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			releaseAll(rctx, b, holds)
			rep.Held = time.Since(held)
		})
	}
	defer func() {
		// Always resume, even after a failure or cancellation: a page
		// left paused would never run again.
		release()
		report(err)
	}()
	if err != nil {
		return err
	}
	st, err := e.sampleOnce(ctx, b, targets, holds)
	if err != nil || st == nil {
		return err
	}
	// The category is off in every renderer: the isolates resume while
	// the trace is read.
	read := make(chan *windowTrace, 1)
	go func() { // owned here: waited for below
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		read <- st.read(rctx)
	}()
	release()
	tr := <-read
	rep.Window, rep.Verified = tr.took, tr.verified
	for _, h := range holds {
		if th, ok := tr.hits[h.label]; ok {
			rep.Samples++
			rep.Strays = append(rep.Strays, tr.sampling[th]...)
		}
	}
	sort.Strings(rep.Strays)
	return nil
}

// warmCategories are what a warm-up traces: a category no event has.
var warmCategories = []string{"wdext.warm-up"}

// warmUp traces once, sampling nothing, before a force pauses an isolate
// it has not traced yet. Measured: a renderer's first Tracing.start
// needs its main thread, so with the renderer just created (the page of a
// new site) and paused, Tracing.start did not complete in 10 of 40
// fresh pages (0 of 40 after a warm-up); the isolates a force has seen
// traced once are not held up again.
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
	a, err := e.armChecked(ctx, b, targets, warmCategories)
	if err != nil {
		return err
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	st, err := a.disarm(dctx)
	if err != nil {
		return err
	}
	st.discard() // nothing to read
	*warm = ids
	return nil
}

// sampleOnce arms, triggers one sample in each isolate held, and
// disarms; the stopped trace (stopped.read) says which triggers it saw.
func (e *Engine) sampleOnce(ctx context.Context, b *cdp.Browser, targets []*target.Info, holds []*hold) (*stopped, error) {
	a, err := e.armChecked(ctx, b, targets, sampleCategories)
	if err != nil {
		return nil, err
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
			switch k := stateOf(err); {
			case k == stateCrashed || k == stateGone:
				// Gone since it was found: no profilers left to sample.
			case err != nil:
				errs[i] = err
				if !keepSession(err) {
					b.Forget(h.is.target)
				}
			}
		}()
	}
	wg.Wait()
	// Always disarm, even after a failure or cancellation: a category left
	// on would pollute every profile in the browser.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	st, err := a.disarm(dctx)
	if err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		st.discard()
		return nil, err
	}
	return st, nil
}

// armChecked arms, and when Tracing.start is late (probeTimeout: it
// takes milliseconds), checks the targets again: one that stopped
// answering since they were found holds it, and its state is the answer.
func (e *Engine) armChecked(ctx context.Context, b *cdp.Browser, targets []*target.Info, categories []string) (*armed, error) {
	type result struct {
		a   *armed
		err error
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan result, 1)
	go func() { // owned here: waited for on every path below
		a, err := arm(actx, b, categories)
		done <- result{a, err}
	}()
	late := time.NewTimer(probeTimeout)
	defer late.Stop()
	select {
	case r := <-done:
		return r.a, r.err
	case <-late.C:
	}
	if _, err := e.isolateSessions(ctx, b, targets); err != nil && stateOf(err) != 0 {
		cancel()
		if r := <-done; r.err == nil {
			dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer dcancel()
			st, _ := r.a.disarm(dctx)
			st.discard()
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
