package chromium

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/debugger"
	cdpio "github.com/chromedp/cdproto/io"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/cdproto/tracing"

	"github.com/wdext/wdext/engine/chromium/cdp"
	"github.com/wdext/wdext/wire"
)

// sampleCategories is all a force arms. With devtools.timeline on, Blink
// has V8 take a sample for the events that call into V8 without needing
// a stack: FunctionCall (Blink calling a JS function: a timer, a
// listener, a callback) and TimeStamp (console.timeStamp), and for
// nothing else. The stack category,
// disabled-by-default-devtools.timeline.stack, stays off: with it every
// event that records a JS stack samples too, rendering included (Paint,
// Layout, an EventDispatch with no listener), which a paused page still
// does.
var sampleCategories = []string{"devtools.timeline"}

// triggerWorld names the isolated world the force's scripts run in: the
// page's own globals (a replaced console) cannot intercept them.
const triggerWorld = "wdext forcesample"

// holdURL is the sourceURL of the script a force pauses in.
const holdURL = "wdext-forcesample-hold"

// debuggerIdle is how long an isolate's debugger stays on after a force,
// for the next one: Debugger.enable reports every script of the isolate,
// and the force's own scripts are among them until V8 collects them, so
// enabling at every force would slow down force after force (measured:
// 3 ms to 75 ms over 300 forces in a second).
var debuggerIdle = time.Second

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

// armed is the browser's tracing, on for a force.
type armed struct {
	b        *cdp.Browser
	start    time.Time
	complete <-chan jsonv2.Value
	stop     func() // ends the subscription
	unlock   func()
	once     sync.Once
}

// arm enables categories in the browser until disarm. The trace is
// Perfetto's protobuf, returned as a stream (forcesample_trace.go).
func arm(ctx context.Context, b *cdp.Browser, categories []string) (*armed, error) {
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
	a := &armed{b: b, start: time.Now(), complete: complete, stop: stop, unlock: unlock}
	_, err = cdproto.Call(ctx, b, tracing.Start, tracing.StartParams{
		TransferMode:   tracing.StartTransferModeReturnAsStream,
		StreamFormat:   tracing.StreamFormatProto,
		PerfettoConfig: perfettoConfig(categories),
	})
	if err != nil {
		if ctx.Err() != nil {
			// Cancelled while the browser may be starting to trace all
			// the same: end it, or every later force finds tracing on.
			go endTracing(b, complete, a.stop, unlock) // owned by the arm: ends at tracingComplete, a lost connection or flushTimeout
			return nil, err
		}
		a.stop()
		unlock()
		return nil, tracingRefused("forcesample", err)
	}
	return a, nil
}

// windowTrace is what a force's trace says of its samples.
type windowTrace struct {
	took     time.Duration
	verified bool
	// hits are the triggers seen, by label, with their thread.
	hits map[string]thread
	// sampling are the other events that took a sample, by thread.
	sampling map[thread][]string
}

type thread struct{ pid, tid int64 }

// stopped is a force's tracing once it has fully stopped.
type stopped struct {
	b      *cdp.Browser
	took   time.Duration // Tracing.start sent to tracingComplete received
	loss   bool
	stream cdpio.StreamHandle
}

// disarm ends tracing and returns once it has fully stopped
// (tracingComplete): only then is the category off in every renderer
// (measured: a console.timeStamp evaluated right after takes no sample).
// The result is nil if the flush outlasts ctx: disarm returns anyway, and
// the browser's tracing stays locked until the flush ends.
func (a *armed) disarm(ctx context.Context) (*stopped, error) {
	err := errors.New("already disarmed")
	var st *stopped
	a.once.Do(func() {
		if _, err = cdproto.Call(ctx, a.b, tracing.End, cdproto.Empty{}); err != nil {
			// Tracing may still be on (the end timed out): the lock is
			// held until it is off.
			go endTracing(a.b, a.complete, a.stop, a.unlock) // owned by the arm: ends at tracingComplete, a lost connection or flushTimeout
			return
		}
		select {
		case raw, ok := <-a.complete:
			st = &stopped{b: a.b, took: time.Since(a.start)}
			a.stop()
			a.unlock()
			var c tracing.EventTracingComplete
			st.loss = !ok || jsonv2.Unmarshal(raw, &c) != nil || c.DataLossOccurred
			st.stream = c.Stream
		case <-ctx.Done():
			// A late flush (a browser still starting processes, a loaded
			// machine): the samples are taken, so the caller is done; the
			// browser's tracing stays locked until the flush ends.
			go func() { // owned by the arm: ends at tracingComplete, a lost connection or flushTimeout
				defer a.unlock()
				defer a.stop()
				awaitComplete(a.b, a.complete, time.After(flushTimeout))
			}()
		}
	})
	return st, err
}

// read reads the trace of a stopped force's window, and closes its
// stream.
func (st *stopped) read(ctx context.Context) *windowTrace {
	data, err := readStream(ctx, st.b, st.stream)
	tr, perr := readForceTrace(data)
	if perr != nil {
		tr = &windowTrace{hits: map[string]thread{}, sampling: map[thread][]string{}}
	}
	tr.took, tr.verified = st.took, !st.loss && err == nil && perr == nil
	return tr
}

// readStream reads a stream of the browser's to its end, and closes it
// (in the background: nothing waits for that).
func readStream(ctx context.Context, b *cdp.Browser, h cdpio.StreamHandle) ([]byte, error) {
	if h == "" {
		return nil, errors.New("no stream")
	}
	defer closeStream(b, h)
	var data []byte
	for {
		// IO.read's data is a string, in base64 when base64Encoded.
		var res struct {
			Base64Encoded bool   `json:"base64Encoded"`
			Data          string `json:"data"`
			EOF           bool   `json:"eof"`
		}
		if err := b.Call(ctx, cdpio.CommandRead, cdpio.ReadParams{Handle: h, Size: 1 << 22}, &res); err != nil {
			return nil, err
		}
		if res.Base64Encoded {
			d, err := base64.StdEncoding.DecodeString(res.Data)
			if err != nil {
				return nil, err
			}
			data = append(data, d...)
		} else {
			data = append(data, res.Data...)
		}
		if res.EOF {
			return data, nil
		}
	}
}

// discard closes the trace's stream, unread.
func (st *stopped) discard() {
	if st != nil && st.stream != "" {
		closeStream(st.b, st.stream)
	}
}

// closeStream closes a stream of the browser's, in the background.
func closeStream(b *cdp.Browser, h cdpio.StreamHandle) {
	go func() { // owned by the stream: bounded by its timeout
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = cdproto.Call(ctx, b, cdpio.Close, cdpio.CloseParams{Handle: h})
	}()
}

// flushTimeout bounds how long a late trace flush keeps the next force
// waiting.
const flushTimeout = 30 * time.Second

// endTracing ends a tracing session whose start or end was cut short, and
// releases the browser's tracing once it is off (complete is the
// subscription to tracingComplete, stopped by stop).
func endTracing(b *cdp.Browser, complete <-chan jsonv2.Value, stop, unlock func()) {
	defer unlock()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	if _, err := cdproto.Call(ctx, b, tracing.End, cdproto.Empty{}); err != nil {
		return // not started after all, or the browser is gone
	}
	awaitComplete(b, complete, ctx.Done())
}

// awaitComplete waits for tracingComplete (and closes the trace's
// stream), a lost connection, or timeout.
func awaitComplete[T any](b *cdp.Browser, complete <-chan jsonv2.Value, timeout <-chan T) {
	select {
	case raw, ok := <-complete:
		var c tracing.EventTracingComplete
		if ok && jsonv2.Unmarshal(raw, &c) == nil && c.Stream != "" {
			closeStream(b, c.Stream)
		}
	case <-b.Done():
	case <-timeout:
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

// hold is one isolate whose main thread a force keeps paused: in the V8
// debugger's pause, the renderer runs the DevTools commands sent to it
// and none of the page's tasks (timers, events, message handlers,
// animation frame callbacks), in any page of the process.
type hold struct {
	is    isolate
	label string
	dbg   *sessionDebugger
	// held: the isolate is paused, by the force when ours, else by
	// another debugger (and it stays so).
	held, ours bool
	// resumed delivers the answer of the script paused in, once the
	// isolate is resumed.
	resumed chan error
	// skipping is closed once pauses are skipped again, ok if they are:
	// set as soon as the isolate is held (the skip does not end a pause
	// under way), while the force goes on.
	skipping chan struct{}
	skipped  bool
	// w watches the target from the pause to the release.
	w *watch
}

func (h *hold) stopWatch() {
	if h.w != nil {
		h.w.stop()
		h.w = nil
	}
}

// sessionDebugger is the state of the debugger a force turns on through
// a session, kept with the session (cdp.Session.Values) and changed in
// the browser's force turn only.
type sessionDebugger struct {
	enabled bool
	// forces counts the forces that left the debugger on: the timer of
	// the last one turns it off (disableIdle).
	forces atomic.Uint64
	// releasing is closed when a release left under way is done (nil:
	// none): the next force on the session waits for it.
	releasing chan struct{}
	// world is the force's isolated world in the target's document (0:
	// none yet), made in the isolate worldIsolate.
	world        runtime.ExecutionContextID
	worldIsolate string
}

func debuggerOf(s *cdp.Session) *sessionDebugger {
	type key struct{}
	v, _ := s.Values.LoadOrStore(key{}, &sessionDebugger{})
	return v.(*sessionDebugger)
}

// holdAll pauses every isolate, all at once. Those it paused are in the
// result even when it fails, for releaseAll.
func (e *Engine) holdAll(ctx context.Context, b *cdp.Browser, isolates []isolate) ([]*hold, error) {
	holds := make([]*hold, len(isolates))
	errs := make([]error, len(isolates))
	var wg sync.WaitGroup
	for i, is := range isolates {
		holds[i] = &hold{is: is, label: triggerLabel(is.target), dbg: debuggerOf(is.session)}
		wg.Add(1)
		go func() { // owned here: waited for below
			defer wg.Done()
			errs[i] = e.pause(ctx, b, holds[i])
		}()
	}
	wg.Wait()
	var out []*hold
	var failed []error
	for i, h := range holds {
		switch k := stateOf(errs[i]); {
		case errs[i] == nil:
			out = append(out, h)
		case k == stateCrashed || k == stateGone:
			// Gone since it was found: no profilers left to sample.
			h.stopWatch()
		default:
			out = append(out, h) // its debugger may be on, or it may pause yet
			failed = append(failed, errs[i])
			if !keepSession(errs[i]) {
				b.Forget(h.is.target)
			}
		}
	}
	return out, errors.Join(failed...)
}

// pause makes the isolate's main thread enter the V8 debugger's pause,
// in a debugger statement of the force's own (a pause requested with
// Debugger.pause lands in whatever script runs next, often the page's;
// breaking into optimized code deoptimizes it, and V8's profiler samples
// every deoptimization). The script answers only once the isolate is
// resumed (release). On success the hold keeps the watch on the target
// for the rest of the force (the trigger, the release).
func (e *Engine) pause(ctx context.Context, b *cdp.Browser, h *hold) (err error) {
	s, d := h.is.session, h.dbg
	w := e.watch(ctx, b, s, h.is.info)
	defer func() {
		if err != nil {
			w.stop()
			return
		}
		h.w = w
		if h.held {
			// Pauses are skipped again from the resume on: set now, off
			// the force's path, and waited for before the resume.
			h.skipping = make(chan struct{})
			go func() { // owned by the hold: waited for by releaseAll
				defer close(h.skipping)
				h.skipped = w.quick(func(ctx context.Context) error {
					_, err := cdproto.Call(ctx, s, debugger.SetSkipAllPauses, debugger.SetSkipAllPausesParams{Skip: true})
					return err
				}) == nil
			}()
		}
	}()
	if d.releasing != nil {
		// A previous force's release of this isolate is under way.
		if err := w.quick(func(ctx context.Context) error {
			select {
			case <-d.releasing:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}); err != nil {
			return err
		}
	}
	paused, stop := s.Subscribe(debugger.Paused.Method)
	defer stop()
	if !d.enabled {
		d.enabled = true
		if err := w.quick(func(ctx context.Context) error {
			_, err := cdproto.Call(ctx, s, debugger.Enable, debugger.EnableParams{})
			return err
		}); err != nil {
			return err
		}
		// The debugger reports a pause already under way (another
		// client's breakpoint) as it is enabled: the page runs no task
		// then either.
		select {
		case <-paused:
			h.held = true
			if d.world != 0 && d.worldIsolate == h.is.id {
				return nil
			}
			return w.quick(func(ctx context.Context) error { return d.createWorld(ctx, s, h.is) })
		default:
		}
	}
	// Pauses are skipped between forces (the page's own debugger
	// statements, exceptions): not during one. The isolated world is
	// made once per document: Page.createIsolatedWorld gives the same one
	// again, and an execution context id is never reused in an isolate
	// (a document that replaced it makes the evaluation fail, and the
	// world is made anew); the isolate's id tells a new process.
	cached := d.world != 0 && d.worldIsolate == h.is.id
	if err := w.quick(func(ctx context.Context) error {
		skip := make(chan error, 1)
		go func() { // owned here: waited for below
			_, err := cdproto.Call(ctx, s, debugger.SetSkipAllPauses, debugger.SetSkipAllPausesParams{Skip: false})
			skip <- err
		}()
		var err error
		if !cached {
			err = d.createWorld(ctx, s, h.is)
		}
		return errors.Join(err, <-skip)
	}); err != nil {
		return err
	}
	h.resumed = make(chan error, 1)
	h.ours = true
	evaluate := func() {
		world := d.world
		go func() { // owned by the hold: answers once release resumes the isolate (or the target goes)
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
			defer cancel()
			h.resumed <- evaluateIn(ctx, s, world, "debugger\n//# sourceURL="+holdURL)
		}()
	}
	evaluate()
	timer := time.NewTimer(probeTimeout)
	defer timer.Stop()
	for {
		select {
		case <-paused:
			h.held = true
			return nil
		case err := <-h.resumed:
			if err != nil && cached && w.fateErr() == nil {
				// The document the world was made in is gone.
				cached = false
				if err := w.quick(func(ctx context.Context) error { return d.createWorld(ctx, s, h.is) }); err != nil {
					h.ours = false
					return err
				}
				evaluate()
				continue
			}
			h.ours = false
			if err == nil {
				err = errors.New("its debugger statement did not pause (is another debugger holding it?)")
			}
			if f := w.fateErr(); f != nil {
				return f
			}
			return fmt.Errorf("the %s did not pause in the debugger: %w", w.what(), err)
		case <-timer.C:
			return w.diagnose()
		case <-w.ctx.Done():
			if f := w.fateErr(); f != nil {
				return f
			}
			return w.ctx.Err()
		}
	}
}

// createWorld makes the force's isolated world in the target's document.
func (d *sessionDebugger) createWorld(ctx context.Context, s *cdp.Session, is isolate) error {
	d.world = 0
	res, err := cdproto.Call(ctx, s, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{
		FrameID: cdproto.FrameID(is.target), WorldName: triggerWorld,
	})
	if err != nil {
		return err
	}
	d.world, d.worldIsolate = res.ExecutionContextID, is.id
	return nil
}

// releaseAll resumes the isolates paused, pauses being skipped again
// from then on, and leaves their debugger on for debuggerIdle. It waits
// for the resume of the isolates it held (answered at once; the script
// paused in answers after, unawaited), not for those it could not pause
// (a busy page answers only once it is free), whose debugger it turns
// off.
func releaseAll(ctx context.Context, b *cdp.Browser, holds []*hold) {
	var wg sync.WaitGroup
	for _, h := range holds {
		s, d := h.is.session, h.dbg
		if !h.held {
			if d.enabled {
				d.enabled = false
				d.releasing = make(chan struct{})
				go release(s, h, d.releasing) // owned by the hold: ends once the target answers, goes, or flushTimeout passes
			}
			continue
		}
		wg.Add(1)
		go func() { // owned here: waited for below
			defer wg.Done()
			skipped := false
			if h.skipping != nil {
				select {
				case <-h.skipping:
					skipped = h.skipped
				case <-ctx.Done():
				}
			}
			if !skipped {
				// Before the resume: the skip does not end the pause the
				// isolate is in, and no pause of the page's own comes
				// between.
				_, _ = cdproto.Call(ctx, s, debugger.SetSkipAllPauses, debugger.SetSkipAllPausesParams{Skip: true})
			}
			if h.ours {
				_, _ = cdproto.Call(ctx, s, debugger.Resume, debugger.ResumeParams{})
			}
		}()
		if d.enabled {
			n := d.forces.Add(1)
			time.AfterFunc(debuggerIdle, func() { disableIdle(b, s, d, n) })
		}
	}
	wg.Wait()
	for _, h := range holds {
		h.stopWatch()
	}
}

// release resumes an isolate the force could not pause in time (it may
// pause yet) and turns its debugger off, whenever it answers.
func release(s *cdp.Session, h *hold, done chan struct{}) {
	defer close(done)
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	if h.ours {
		_, _ = cdproto.Call(ctx, s, debugger.Resume, debugger.ResumeParams{})
	}
	_, _ = cdproto.Call(ctx, s, debugger.Disable, cdproto.Empty{})
}

// disableIdle turns off a debugger that no force used for debuggerIdle
// since the n-th.
func disableIdle(b *cdp.Browser, s *cdp.Session, d *sessionDebugger, n uint64) {
	if d.forces.Load() != n {
		return // a later force set a later timer
	}
	turn := forcesOf(b)
	select {
	case turn <- struct{}{}:
	case <-b.Done():
		return
	}
	defer func() { <-turn }()
	if !d.enabled || d.forces.Load() != n {
		return // off already, or a later force set a later timer
	}
	d.enabled = false
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = cdproto.Call(ctx, s, debugger.Disable, cdproto.Empty{})
}

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
