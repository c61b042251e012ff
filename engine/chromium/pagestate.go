package chromium

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/wdext/wdext/engine/chromium/cdp"
	"github.com/wdext/wdext/wire"
)

// TabCrashed is chromedriver's error code for a command on a tab whose
// renderer crashed. It is not a W3C code; chromedriver sends it with HTTP
// 500, as wdext does.
const TabCrashed wire.ErrorCode = "tab crashed"

// probeTimeout is how long a target's main thread may leave a quick
// command (Runtime.evaluate "1", Runtime.getIsolateId) unanswered before
// wdext looks at why (see diagnose); interruptTimeout how long it then
// waits for the interrupt that tells a script from a block (answered in
// milliseconds). driverTimeout bounds each of the
// engine's own calls to the driver (GET /window, GET /alert/text), which
// answer at once unless the driver is still busy with another command of
// the session. Variables so that the tests can shorten them.
var (
	probeTimeout     = 2 * time.Second
	interruptTimeout = time.Second
	driverTimeout    = 5 * time.Second
)

// stateKind is what became of a target that a command could not use.
type stateKind int

const (
	stateCrashed stateKind = iota + 1 // its renderer is gone
	stateGone                         // the target closed (or detached us)
	stateBusy                         // its main thread runs a script
	stateDialog                       // a user prompt blocks it
	stateBlocked                      // it does not answer, yet runs no script
)

// stateError is a target's state as the W3C error a command answers.
type stateError struct {
	kind stateKind
	err  *wire.Error
}

func (e *stateError) Error() string { return e.err.Error() }
func (e *stateError) Unwrap() error { return e.err }

// stateOf is the state err reports, or 0 when it reports none.
func stateOf(err error) stateKind {
	var se *stateError
	if errors.As(err, &se) {
		return se.kind
	}
	return 0
}

// keepSession reports whether a session whose command failed with err is
// still good: one to a target that is busy, blocked or crashed still is
// (the target may recover or reload); after any other failure it is
// dropped, and the next command attaches anew.
func keepSession(err error) bool {
	switch stateOf(err) {
	case stateBusy, stateDialog, stateBlocked, stateCrashed:
		return true
	}
	return false
}

// watch follows one target while a command runs in it. A crash
// (Inspector.targetCrashed) or the target's end (Inspector.detached) ends
// the command's context at once; quick bounds the calls that a free main
// thread answers at once, and says why one was not answered.
//
// Chromium 156, measured: while a page's main thread runs a script (a
// for(;;) loop), waits in alert() or its renderer has crashed, the
// commands that its renderer answers (Runtime.*, HeapProfiler.*,
// Page.enable, Debugger.setSkipAllPauses) and a browser-wide
// Tracing.start wait, without end; the browser's own (Target.*,
// Inspector.enable, SystemInfo.*) answer. The exceptions are the few
// commands Chromium runs by a V8 interrupt (Performance.getMetrics,
// Debugger.pause), answered while a script runs (see diagnose).
type watch struct {
	e     *Engine
	s     *cdp.Session
	t     *target.Info
	outer context.Context
	// ctx is outer, ended when the target crashes or goes away.
	ctx         context.Context
	cancel      context.CancelFunc
	wg          sync.WaitGroup
	unsubscribe [2]func()

	mu   sync.Mutex
	fate *stateError // what ended ctx, if the target did
}

// watch starts watching target t through session s; stop ends it.
func (e *Engine) watch(ctx context.Context, s *cdp.Session, t *target.Info) *watch {
	w := &watch{e: e, s: s, t: t, outer: ctx}
	w.ctx, w.cancel = context.WithCancel(ctx)
	crashed, stopCrashed := s.Subscribe(inspector.TargetCrashed.Method)
	detached, stopDetached := s.Subscribe(inspector.Detached.Method)
	w.unsubscribe = [2]func(){stopCrashed, stopDetached}
	w.wg.Add(2)
	go func() { // owned by the watch: ends when stop (or a lost connection) closes the subscriptions
		defer w.wg.Done()
		for crashed != nil || detached != nil {
			select {
			case _, ok := <-crashed:
				if !ok {
					crashed = nil
					continue
				}
				w.end(w.crashed())
			case raw, ok := <-detached:
				if !ok {
					detached = nil
					continue
				}
				var ev inspector.EventDetached
				_ = jsonv2.Unmarshal(raw, &ev)
				if strings.Contains(strings.ToLower(ev.Reason), "process gone") {
					w.end(w.crashed())
				} else {
					w.end(w.gone(ev.Reason))
				}
			}
		}
	}()
	go func() { // owned by the watch: bounded by probeTimeout, ended by stop
		defer w.wg.Done()
		ctx, cancel := context.WithTimeout(w.ctx, probeTimeout)
		defer cancel()
		// The browser answers Inspector.enable itself, at once, and sends
		// Inspector.targetCrashed before its reply when the target's
		// renderer is gone: every enable does, not only the first.
		_, _ = cdproto.Call(ctx, s, inspector.Enable, cdproto.Empty{})
	}()
	return w
}

// stop ends the watch and waits for its goroutines.
func (w *watch) stop() {
	w.cancel()
	for _, u := range w.unsubscribe {
		u()
	}
	w.wg.Wait()
}

// end records the target's fate (the first one) and ends ctx.
func (w *watch) end(err *stateError) {
	w.mu.Lock()
	if w.fate == nil {
		w.fate = err
	}
	w.mu.Unlock()
	w.cancel()
}

// fateErr is the target's fate, or nil while it is there.
func (w *watch) fateErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fate == nil {
		return nil
	}
	return w.fate
}

func (w *watch) what() string { return describe(w.t.Type, w.t.URL) }

func (w *watch) crashed() *stateError {
	if w.t.Type == "page" {
		return &stateError{stateCrashed, wire.Errorf(TabCrashed,
			"tab crashed: the renderer of the %s is gone (it crashed or was killed); delete the session and start a new one (chromedriver answers every later command of this session, Navigate To and New Window too, with \"tab crashed\")", w.what())}
	}
	return &stateError{stateCrashed, wire.Errorf(wire.UnknownError, "the renderer of the %s crashed", w.what())}
}

func (w *watch) gone(reason string) *stateError {
	if w.t.Type == "page" {
		return &stateError{stateGone, wire.Errorf(wire.NoSuchWindow, "the window's %s went away (%s): the window was closed", w.what(), reason)}
	}
	return &stateError{stateGone, wire.Errorf(wire.UnknownError, "the %s went away (%s)", w.what(), reason)}
}

// quick runs call, a command that the target's main thread answers at
// once when it is free, within probeTimeout. When the target does not
// answer in time, the error says why, as a *stateError: its renderer
// crashed, a script keeps its main thread busy, a user prompt is open, or
// it is blocked otherwise. The command's own deadline or cancellation,
// and the target's errors, come back as they are.
func (w *watch) quick(call func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(w.ctx, probeTimeout)
	defer cancel()
	err := call(ctx)
	if err == nil {
		return nil
	}
	if f := w.fateErr(); f != nil {
		return f
	}
	if w.outer.Err() != nil || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err
	}
	return w.diagnose()
}

// probe checks that the target's main thread answers (Runtime.evaluate
// "1"), before a long command that it would leave waiting.
func (w *watch) probe() error {
	return w.quick(func(ctx context.Context) error {
		_, err := cdproto.Call(ctx, w.s, runtime.Evaluate, runtime.EvaluateParams{Expression: "1"})
		return err
	})
}

// long runs call, a command that may legitimately take long (a heap
// snapshot), with the command's own deadline, ended early if the target
// crashes or goes away meanwhile.
func (w *watch) long(call func(context.Context) error) error {
	err := call(w.ctx)
	if err != nil {
		if f := w.fateErr(); f != nil {
			return f
		}
	}
	return err
}

// onPage runs call in the target after a probe, under a watch: the shape
// of every long command on a page.
func (e *Engine) onPage(ctx context.Context, s *cdp.Session, t *target.Info, call func(context.Context) error) error {
	w := e.watch(ctx, s, t)
	defer w.stop()
	if err := w.probe(); err != nil {
		return err
	}
	return w.long(call)
}

// probeAll probes the main thread of each target (see probe) at once,
// and returns the first that is busy, blocked or in a user prompt.
// Targets that went away or crashed are left out (isolateSessions says
// which crash matters).
func (e *Engine) probeAll(ctx context.Context, b *cdp.Browser, targets []*target.Info) error {
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() { // owned here: waited for below
			defer wg.Done()
			s, err := b.Attach(ctx, t.TargetID)
			if err != nil {
				return // gone: no profiler left there
			}
			w := e.watch(ctx, s, t)
			defer w.stop()
			errs[i] = w.probe()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if k := stateOf(err); k != 0 && k != stateGone && k != stateCrashed {
			return err
		}
	}
	return nil
}

// diagnose says why the target left a quick command unanswered for
// probeTimeout. Chromium answers Performance.getMetrics by a V8
// interrupt: a target that answers it runs a script; one that does not is
// blocked outside V8: in a user prompt when the driver has one open in
// that window (chromedriver tracks them), else in something else (a
// synchronous request). The driver is asked only then: chromedriver
// answers GET /alert/text on a busy page only once the page is free
// again. (Chromium 156, measured: a page in a loop answers in 1–2 ms, one
// in alert() never. A session first attached while the page loops
// answers nothing at all, so that page reads as blocked.)
func (w *watch) diagnose() error {
	start := time.Now()
	busy := w.interruptible()
	waited := probeTimeout + time.Since(start)
	if f := w.fateErr(); f != nil {
		return f
	}
	if err := w.outer.Err(); err != nil {
		return fmt.Errorf("the %s did not answer within %s: %w", w.what(), seconds(probeTimeout), err)
	}
	if busy {
		return &stateError{stateBusy, wire.Errorf(wire.Timeout,
			"the %s: its main thread is busy: a script has been running for more than %s", w.what(), seconds(probeTimeout))}
	}
	if w.t.Type == "page" {
		if text, ok := w.e.dialog(w.ctx, w.t.TargetID); ok {
			return &stateError{stateDialog, wire.Errorf(wire.UnexpectedAlertOpen,
				"the %s has a user prompt open (%q); accept or dismiss it first (POST /session/{id}/alert/accept or …/alert/dismiss)", w.what(), text)}
		}
	}
	return &stateError{stateBlocked, wire.Errorf(wire.Timeout,
		"the %s has not answered for more than %s and runs no script that wdext can see: its main thread is blocked (a user prompt, a synchronous request, a debugger pause), or was already busy when wdext first reached it", w.what(), seconds(waited.Round(100*time.Millisecond)))}
}

// interruptible reports whether the target answers Performance.getMetrics
// within interruptTimeout: by an interrupt, while a script runs (it
// changes nothing, and answers no metrics unless Performance is enabled).
// An error reply counts as an answer too: a worker has no Performance
// domain (what a busy worker answers has not been measured).
func (w *watch) interruptible() bool {
	ctx, cancel := context.WithTimeout(w.ctx, interruptTimeout)
	defer cancel()
	_, err := cdproto.Call(ctx, w.s, performance.GetMetrics, cdproto.Empty{})
	var answered *cdp.Error
	return err == nil || errors.As(err, &answered)
}

func seconds(d time.Duration) string { return fmt.Sprintf("%g s", d.Seconds()) }

// dialog asks the driver for the text of the user prompt open in the
// page, when the page is the session's current window (GET /alert/text
// is about that one).
func (e *Engine) dialog(ctx context.Context, page target.ID) (string, bool) {
	if e.driver == nil {
		return "", false
	}
	handle, err := e.currentWindow(ctx)
	if err != nil || handle != string(page) {
		return "", false
	}
	ctx, cancel := context.WithTimeout(ctx, driverTimeout)
	defer cancel()
	var text *string
	if err := e.driver.Do(ctx, http.MethodGet, "alert/text", nil, &text); err != nil {
		return "", false
	}
	if text == nil {
		return "", true
	}
	return *text, true
}

// noPage is the error of a current window that no page target has: a
// window that was closed when the browser has no page left or when the
// handle is a target id (a target that no longer exists), else a driver
// whose handles are not target ids, with several pages to choose from.
func noPage(np *cdp.NoPageError) error {
	if np.Pages == 0 || cdp.IsTargetID(np.Handle) {
		return wire.Errorf(wire.NoSuchWindow, "the current window (handle %s) is not a page target of the browser: it was closed", np.Handle)
	}
	return wire.Errorf(wire.UnsupportedOperation,
		"cannot tell which page is the current window: %v (the driver's window handles are not CDP target ids)", np)
}
