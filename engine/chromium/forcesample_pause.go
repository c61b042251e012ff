package chromium

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/debugger"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/wdext/wdext/engine/chromium/cdp"
)

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
			errs[i] = e.pause(ctx, holds[i])
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
func (e *Engine) pause(ctx context.Context, h *hold) (err error) {
	s, d := h.is.session, h.dbg
	w := e.watch(ctx, s, h.is.info)
	defer func() {
		if err != nil {
			w.stop()
			return
		}
		h.keep(w)
	}()
	if err := awaitRelease(w, d); err != nil {
		return err
	}
	paused, stop := s.Subscribe(debugger.Paused.Method)
	defer stop()
	if !d.enabled {
		if held, err := h.enable(w, paused); held || err != nil {
			return err
		}
	}
	// Pauses are skipped between forces (the page's own debugger
	// statements, exceptions): not during one. The isolated world is
	// made once per document: Page.createIsolatedWorld gives the same one
	// again, and an execution context id is never reused in an isolate
	// (a document that replaced it makes the evaluation fail, and the
	// world is made anew); the isolate's id tells a new process.
	cached := d.world != 0 && d.worldIsolate == h.is.id
	if err := w.quick(func(ctx context.Context) error { return h.unskip(ctx, cached) }); err != nil {
		return err
	}
	return h.pauseIn(ctx, w, paused)
}

// keep keeps the watch on a hold paused; when the isolate is held, pauses
// are skipped again from the resume on: set now, off the force's path,
// and waited for before the resume.
func (h *hold) keep(w *watch) {
	h.w = w
	if !h.held {
		return
	}
	s := h.is.session
	h.skipping = make(chan struct{})
	go func() { // owned by the hold: waited for by releaseAll
		defer close(h.skipping)
		h.skipped = w.quick(func(ctx context.Context) error {
			_, err := cdproto.Call(ctx, s, debugger.SetSkipAllPauses, debugger.SetSkipAllPausesParams{Skip: true})
			return err
		}) == nil
	}()
}

// awaitRelease waits for a previous force's release of the isolate, if
// one is under way.
func awaitRelease(w *watch, d *sessionDebugger) error {
	if d.releasing == nil {
		return nil
	}
	return w.quick(func(ctx context.Context) error {
		select {
		case <-d.releasing:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
}

// enable turns the isolate's debugger on. The debugger reports a pause
// already under way (another client's breakpoint) as it is enabled: the
// page runs no task then either, and the isolate is held (held true).
func (h *hold) enable(w *watch, paused <-chan jsonv2.Value) (held bool, err error) {
	s, d := h.is.session, h.dbg
	d.enabled = true
	if err := w.quick(func(ctx context.Context) error {
		_, err := cdproto.Call(ctx, s, debugger.Enable, debugger.EnableParams{})
		return err
	}); err != nil {
		return false, err
	}
	select {
	case <-paused:
		h.held = true
		if d.world != 0 && d.worldIsolate == h.is.id {
			return true, nil
		}
		return true, w.quick(func(ctx context.Context) error { return d.createWorld(ctx, s, h.is) })
	default:
		return false, nil
	}
}

// unskip stops skipping pauses and, unless cached, makes the isolated
// world, both at once.
func (h *hold) unskip(ctx context.Context, cached bool) error {
	s, d := h.is.session, h.dbg
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
}

// pauseIn evaluates the debugger statement in the isolated world and
// waits for the pause; a world whose document was replaced since it was
// made (a cached one, or one made just now on a page still committing its
// first document: measured on a new session's data:, page) is made anew
// once, and the statement evaluated again.
func (h *hold) pauseIn(ctx context.Context, w *watch, paused <-chan jsonv2.Value) error {
	s, d := h.is.session, h.dbg
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
	remade := false
	timer := time.NewTimer(probeTimeout)
	defer timer.Stop()
	for {
		select {
		case <-paused:
			h.held = true
			return nil
		case err := <-h.resumed:
			if err != nil && !remade && w.fateErr() == nil {
				// The document the world was made in is gone.
				remade = true
				if err := w.quick(func(ctx context.Context) error { return d.createWorld(ctx, s, h.is) }); err != nil {
					h.ours = false
					return err
				}
				evaluate()
				continue
			}
			h.ours = false
			return w.notPaused(err)
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

// notPaused is the error of a debugger statement that answered (err, nil
// if it ran through) instead of pausing.
func (w *watch) notPaused(err error) error {
	if err == nil {
		err = errors.New("its debugger statement did not pause (is another debugger holding it?)")
	}
	if f := w.fateErr(); f != nil {
		return f
	}
	return fmt.Errorf("the %s did not pause in the debugger: %w", w.what(), err)
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
	forces := forcesOf(b)
	select {
	case forces <- struct{}{}:
	case <-b.Done():
		return
	}
	defer forces.Give()
	if !d.enabled || d.forces.Load() != n {
		return // off already, or a later force set a later timer
	}
	d.enabled = false
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = cdproto.Call(ctx, s, debugger.Disable, cdproto.Empty{})
}
