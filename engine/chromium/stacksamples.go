package chromium

import (
	"context"
	"errors"
	"sync"

	"github.com/chromedp/cdproto/target"

	"github.com/wdext/wdext/engine/chromium/cdp"
	"github.com/wdext/wdext/internal/turn"
	"github.com/wdext/wdext/wire"
)

// Stack samples (the session's wire.StackSamplesCapability, WPT RFC 81):
// sampleCategories stay traced for the whole session, so that V8 samples
// at every console.timeStamp(), a page's own included, synchronously and
// with its caller on the stack, and also at every callback Blink calls
// (timers, listeners, message handlers): counts are no longer exact. A
// force then pauses nothing and arms nothing: it calls console.timeStamp
// in each isolate's page, but in one whose page (or a same-origin frame
// of it) marked that it sampled itself (wire.SampledHereSymbol), where it
// clears the mark instead.

// stackHolder names the session's trace as the holder of the browser's
// tracing, for the GC log's "busy" message.
const stackHolder = "the session's stack samples (" + wire.StackSamplesCapability + ")"

// traceStacks arms the session's trace when the session is created.
func (e *Engine) traceStacks(ctx context.Context) error {
	b, err := e.browser(ctx)
	if err != nil {
		return err
	}
	_, err = turn.With(ctx, forcesOf(b), func() (any, error) { return nil, traceStacksOn(ctx, b) })
	return err
}

// traceStacksOn arms the session's trace on connection b unless it is
// armed there: a trace ends with the connection that started it, so a
// new connection (after a lost one) arms again, at its first force. Called
// in the browser's force turn.
func traceStacksOn(ctx context.Context, b *cdp.Browser) error {
	type key struct{}
	if _, ok := b.Values.Load(key{}); ok {
		return nil
	}
	a, err := armFor(ctx, b, b, stackHolder, true, sampleCategories)
	if err != nil {
		return err
	}
	b.Values.Store(key{}, a) // disarmed by closing the connection
	return nil
}

// forceTraced is a force in a stack-samples session: one trigger per
// isolate, in the page's own world (where the page's mark is), nothing
// paused.
func (e *Engine) forceTraced(ctx context.Context, b *cdp.Browser, targets []*target.Info) error {
	if err := traceStacksOn(ctx, b); err != nil {
		return err
	}
	isolates, err := e.isolateSessions(ctx, b, targets)
	if err != nil {
		return err
	}
	errs := make([]error, len(isolates))
	var wg sync.WaitGroup
	for i, is := range isolates {
		wg.Add(1)
		go func() { // owned here: waited for below
			defer wg.Done()
			w := e.watch(ctx, is.session, is.info)
			defer w.stop()
			err := w.quick(func(ctx context.Context) error {
				return evaluateIn(ctx, is.session, 0, tracedTrigger(triggerLabel(is.target)))
			})
			errs[i] = triggerFailed(b, is, err)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// tracedTrigger samples the isolate with console.timeStamp(label) unless
// the page's window, or a same-origin frame in it, holds the mark of a
// sample the page took itself, which it clears.
func tracedTrigger(label string) string {
	return `(() => {
  const k = Symbol.for(` + jsString(wire.SampledHereSymbol) + `);
  const marked = (w) => {
    try {
      if (w[k] === true) { delete w[k]; return true; }
    } catch (e) {} // a cross-origin frame
    for (let i = 0; i < w.length; i++) if (marked(w[i])) return true;
    return false;
  };
  if (!marked(window)) console.timeStamp(` + jsString(label) + `);
})()`
}
