package chromium

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/cdproto/tracing"

	"github.com/wdext/wdext/engine/chromium/cdp"
	"github.com/wdext/wdext/wire"
)

// sampleCategories make Blink attach a JS stack (and so take a V8 sample)
// to the devtools.timeline events it writes; every other category stays
// off to keep the trace, and its cost, near zero.
var sampleCategories = []string{"devtools.timeline", "disabled-by-default-devtools.timeline.stack"}

// trigger writes one stack-carrying trace event (a microtask enqueue) and
// nothing else: setTimeout would write two (install and fire).
var trigger = "queueMicrotask(() => {})"

// arm enables the sampling categories in the browser until the returned
// disarm is called. disarm returns once tracing has fully stopped
// (tracingComplete): only then is the category off in every renderer, so
// that whatever the page does next (handle the reply to its own request,
// say) samples nothing. If the flush outlasts disarm's ctx, disarm returns
// anyway and the browser stays locked until the flush ends.
func arm(ctx context.Context, b *cdp.Browser) (disarm func(context.Context) error, err error) {
	unlock, err := b.LockTracing(ctx, "forcesample", false)
	var busy *cdp.TracingBusyError
	if errors.As(err, &busy) {
		return nil, wire.Errorf(wire.UnsupportedOperation,
			"forcesample needs the browser's tracing, but %s holds it: "+
				`POST /session/{id}/wdext/memory/gc-log {"collect": false} stops it`, busy.Holder)
	}
	if err != nil {
		return nil, err
	}
	complete, stop := b.Subscribe(tracing.TracingComplete.Method)
	_, err = cdproto.Call(ctx, b, tracing.Start, tracing.StartParams{
		TransferMode: tracing.StartTransferModeReportEvents,
		TraceConfig: &tracing.TraceConfig{
			RecordMode:          tracing.TraceConfigRecordModeRecordAsMuchAsPossible,
			TraceBufferSizeInKb: 1024,
			IncludedCategories:  sampleCategories,
			ExcludedCategories:  []string{"*"},
		},
	})
	if err != nil {
		if ctx.Err() != nil {
			// Cancelled while the browser may be starting to trace all
			// the same: end it, or every later force finds tracing on.
			go endTracing(b, complete, stop, unlock) // owned by the arm: ends at tracingComplete, a lost connection or flushTimeout
			return nil, err
		}
		stop()
		unlock()
		return nil, tracingRefused("forcesample", err)
	}
	var once sync.Once
	return func(ctx context.Context) error {
		err := errors.New("already disarmed")
		once.Do(func() {
			if _, err = cdproto.Call(ctx, b, tracing.End, cdproto.Empty{}); err != nil {
				// Tracing may still be on (the end timed out): the lock
				// is held until it is off.
				go endTracing(b, complete, stop, unlock) // owned by the arm: ends at tracingComplete, a lost connection or flushTimeout
				return
			}
			select {
			case <-complete:
				stop()
				unlock()
			case <-ctx.Done():
				// A late flush (a browser still starting processes, a
				// loaded machine): the samples are taken, so the caller
				// is done; the browser's tracing stays locked until the
				// flush ends.
				go func() { // owned by the arm: ends at tracingComplete, a lost connection or flushTimeout
					defer unlock()
					defer stop()
					select {
					case <-complete:
					case <-b.Done():
					case <-time.After(flushTimeout):
					}
				}()
			}
		})
		return err
	}, nil
}

// flushTimeout bounds how long a late trace flush keeps the next force
// waiting.
const flushTimeout = 30 * time.Second

// endTracing ends a tracing session whose start or end was cut short, and
// releases the browser's tracing once it is off (complete is the
// subscription to tracingComplete, stopped by stop).
func endTracing[E any](b *cdp.Browser, complete <-chan E, stop, unlock func()) {
	defer unlock()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	if _, err := cdproto.Call(ctx, b, tracing.End, cdproto.Empty{}); err != nil {
		return // not started after all, or the browser is gone
	}
	select {
	case <-complete:
	case <-b.Done():
	case <-ctx.Done():
	}
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

// forceSample finds the isolates first, then arms: a target that does
// not answer (busy, in a dialog) would also hold the browser's
// Tracing.start, so it is found, and named, before tracing is asked for.
func (e *Engine) forceSample(ctx context.Context, b *cdp.Browser) error {
	targets, err := b.Targets(ctx, "page", "iframe")
	if err != nil {
		return err
	}
	// One trigger per isolate: a second one in the same isolate (a
	// same-process window, say) would sample its profilers twice.
	isolates, err := e.isolateSessions(ctx, b, targets)
	if err != nil {
		return err
	}
	disarm, err := e.armChecked(ctx, b, targets)
	if err != nil {
		return err
	}
	errs := make([]error, len(isolates))
	var wg sync.WaitGroup
	for i, is := range isolates {
		wg.Add(1)
		go func() { // owned here: waited for below
			defer wg.Done()
			w := e.watch(ctx, b, is.session, is.info)
			defer w.stop()
			err := w.quick(func(ctx context.Context) error { return evaluate(ctx, is.session, trigger) })
			switch k := stateOf(err); {
			case k == stateCrashed || k == stateGone:
				// Gone since it was found: no profilers left to sample.
			case err != nil:
				errs[i] = err
				if !keepSession(err) {
					b.Forget(is.target)
				}
			}
		}()
	}
	wg.Wait()
	// Always disarm, even after a failure or cancellation: a category left
	// on would pollute every profile in the browser.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := disarm(dctx); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// armChecked arms, and when Tracing.start is late (probeTimeout: it
// takes milliseconds), checks the targets again: one that stopped
// answering since they were found holds it, and its state is the answer.
func (e *Engine) armChecked(ctx context.Context, b *cdp.Browser, targets []*target.Info) (func(context.Context) error, error) {
	type armed struct {
		disarm func(context.Context) error
		err    error
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan armed, 1)
	go func() { // owned here: waited for on every path below
		d, err := arm(actx, b)
		done <- armed{d, err}
	}()
	late := time.NewTimer(probeTimeout)
	defer late.Stop()
	select {
	case r := <-done:
		return r.disarm, r.err
	case <-late.C:
	}
	if _, err := e.isolateSessions(ctx, b, targets); err != nil && stateOf(err) != 0 {
		cancel()
		if r := <-done; r.err == nil {
			dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer dcancel()
			r.disarm(dctx)
		}
		return nil, err
	}
	r := <-done
	if r.err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("the browser did not start tracing (every page and frame answered, but a renderer starting or going away may hold it): %w", r.err)
	}
	return r.disarm, r.err
}

type isolate struct {
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
		id  string
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
			w := e.watch(ctx, b, s, t)
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
			res[i] = found{isolate: isolate{t.TargetID, t, s}, id: id}
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
			if !seen[f.id] {
				seen[f.id] = true
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

func evaluate(ctx context.Context, s *cdp.Session, expr string) error {
	res, err := cdproto.Call(ctx, s, runtime.Evaluate, runtime.EvaluateParams{Expression: expr})
	if err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("evaluating %q: %s", expr, res.ExceptionDetails.Text)
	}
	return nil
}

// tracingRefused is the error of a Tracing.start the browser refused: as
// "unsupported operation" when another client traces (chromedriver's
// performance log with perfLoggingPrefs.traceCategories, DevTools), which
// wdext cannot stop.
func tracingRefused(who string, err error) error {
	if cdp.IsTracingStarted(err) {
		return wire.Errorf(wire.UnsupportedOperation,
			"%s needs the browser's tracing, but another client's tracing session is running "+
				"(chromedriver's performance log with perfLoggingPrefs.traceCategories, DevTools): %v", who, err)
	}
	return err
}
