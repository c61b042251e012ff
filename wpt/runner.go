package wpt

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tebeka/selenium"

	"github.com/wdext/wdext/webdriver/wdclient"
	"github.com/wdext/wdext/wire"
)

var (
	//go:embed js/testharnessreport.js
	testharnessReport string
	//go:embed js/testdriver.js
	testdriverJS []byte
	//go:embed js/testdriver-vendor.js
	testdriverVendorJS []byte
)

// Runner loads each test page in a WebDriver session and collects its
// testharness.js result. It mounts its own testharnessreport.js and
// testdriver.js on the server; testdriver actions come back to it through
// the asynchronous script it waits with (as in wptrunner), so that the page
// is idle, and no script of the runner is pending, while an action runs.
//
// test_driver.force_sample() is the Force Sample command, sent as soon as
// the page asks: each call adds exactly one sample to the profilers it
// samples (where a realm has several, the most recently started one),
// whatever the page, testharness.js and the driver do meanwhile (the
// force keeps them from sampling with it; see package forcesample). The
// samples the browser takes by itself (at a profiler's start, at stop(),
// every sampleInterval, at V8 deoptimizations of the page's code) are in
// the profiles too: a test counts forced samples exactly when it counts
// between two marks, with a sampleInterval longer than that span, as the
// bundled js-self-profiling tests do.
type Runner struct {
	// WebDriver is the endpoint sessions are created at (wdext).
	WebDriver string
	// Capabilities for new sessions: what the browser needs to run the
	// tests Server serves (a kind's WPT capabilities).
	Capabilities selenium.Capabilities
	Server       *Server
	// Testharness is testharness.js itself; nil serves the tree's own
	// /resources/testharness.js.
	Testharness []byte
	// TimeoutMultiplier scales every test's timeout (<= 0 means 1).
	TimeoutMultiplier float64
	// Capture makes the runner's testharnessreport.js hand over, as
	// Result.Attachments, every trace a Profiler's stop() resolves with
	// and every performance.measureUserAgentSpecificMemory() result, in
	// the documents that load it (the test page), besides what the test
	// hands over itself with test_driver.wdext_attach (for the HTML
	// report). It wraps Profiler.prototype.stop and
	// Performance.prototype.measureUserAgentSpecificMemory there; the
	// wrappers return the very promise the originals return.
	Capture bool
	// StackSamples runs the suite in stack-samples sessions
	// (wire.StackSamplesCapability): test_driver.force_sample() samples
	// its caller's realm synchronously, with the caller on the stack (WPT
	// RFC 81), and every Blink callback samples too, so counts are not
	// exact. Engines whose Profiler is wdext's polyfill sample so anyway.
	StackSamples bool
	// Done, if set, is called as each result arrives (progress lines).
	Done func(Result)
	Log  *slog.Logger

	mu sync.Mutex
	wd selenium.WebDriver
	// inflight is the test a cancelled Run left running; Close waits for it.
	inflight sync.WaitGroup
}

// stackSamplesJS ends testdriver-vendor.js in a stack-samples run: it
// tells testdriver.js to sample the caller's realm itself.
const stackSamplesJS = "globalThis[Symbol.for(\"wdext.testdriver.stackSamples\")] = true;\n"

// grace is how long past a test's own timeout the runner waits for the
// harness to report before calling the page hung.
const grace = 5 * time.Second

// Mount adds the runner's files and endpoints to the server.
func (r *Runner) Mount() {
	mult := r.TimeoutMultiplier
	if mult <= 0 {
		mult = 1
	}
	report := strings.Replace(testharnessReport, "__WDEXT_TIMEOUT_MULTIPLIER__", strconv.FormatFloat(mult, 'g', -1, 64), 1)
	report = strings.Replace(report, "__WDEXT_CAPTURE__", strconv.FormatBool(r.Capture), 1)
	r.Server.Mount("/resources/testharnessreport.js", Static("text/javascript; charset=utf-8", []byte(report)))
	r.Server.Mount("/resources/testdriver.js", Static("text/javascript; charset=utf-8", testdriverJS))
	vendor := testdriverVendorJS
	if r.StackSamples {
		vendor = append(slices.Clip(vendor), stackSamplesJS...)
	}
	r.Server.Mount("/resources/testdriver-vendor.js", Static("text/javascript; charset=utf-8", vendor))
	if r.Testharness != nil {
		r.Server.Mount("/resources/testharness.js", Static("text/javascript; charset=utf-8", r.Testharness))
	}
}

// ErrSession is why a run stopped: a session could not be created (the
// driver or the browser cannot start), which no later test would escape.
var ErrSession = errors.New("cannot create a WebDriver session")

// Start creates the session the first test will run in, unless there is
// one: a driver or browser that cannot start fails here, before any test,
// with an error that wraps ErrSession. Run calls it; call it first to learn
// SessionID (e.g. for the browser's version) before the run.
func (r *Runner) Start() error {
	_, err := r.session()
	return err
}

// SessionID is the current session's ID, "" when there is none.
func (r *Runner) SessionID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wd == nil {
		return ""
	}
	return r.wd.SessionID()
}

// Run runs the tests in order and returns their results. A page that hangs
// is a TIMEOUT, one whose browser went away a CRASH; either way the run
// goes on in a new session. Run stops early, with the results of the tests
// that finished, when a session cannot be created (an error wrapping
// ErrSession; no CRASH results) and when ctx ends (ctx's error). Then it
// returns at once: the test under way is left out of the results and
// keeps its session until its WebDriver command ends; Close ends it.
func (r *Runner) Run(ctx context.Context, tests []Test) ([]Result, error) {
	var results []Result
	for _, t := range tests {
		if err := ctx.Err(); err != nil {
			r.closeSession()
			return results, err
		}
		type outcome struct {
			res Result
			err error
		}
		done := make(chan outcome, 1)
		r.inflight.Add(1)
		go func() { // owned by the Runner: Run waits for it, or else Close does
			defer r.inflight.Done()
			res, err := r.runOne(ctx, t)
			done <- outcome{res, err}
		}()
		var o outcome
		select {
		case o = <-done:
		case <-ctx.Done():
			return results, ctx.Err()
		}
		if o.err != nil {
			return results, o.err
		}
		if ctx.Err() != nil && (o.res.Status == StatusCrash || o.res.Status == StatusTimeout) {
			// Interrupted while it ran: that failure is not the test's.
			r.closeSession()
			return results, ctx.Err()
		}
		results = append(results, o.res)
		if r.Done != nil {
			r.Done(o.res)
		}
	}
	r.closeSession()
	return results, nil
}

// Close waits for a test that a cancelled Run left under way (its WebDriver
// command ends when its time is up, or at once when the WebDriver server
// goes away), then deletes the session. Safe to call more than once.
func (r *Runner) Close() {
	r.inflight.Wait()
	r.closeSession()
}

func (r *Runner) log() *slog.Logger {
	if r.Log == nil {
		return slog.Default()
	}
	return r.Log
}

func (r *Runner) session() (selenium.WebDriver, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wd != nil {
		return r.wd, nil
	}
	caps := r.Capabilities
	if r.StackSamples {
		caps = maps.Clone(caps)
		caps[wire.StackSamplesCapability] = true
	}
	wd, err := selenium.NewRemote(caps, r.WebDriver)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrSession, oneLine(err))
	}
	r.wd = wd
	return wd, nil
}

// oneLine is a driver's error as one line: a driver's messages may span
// several and repeat their error code.
func oneLine(err error) string {
	msg := err.Error()
	var se *selenium.Error
	if errors.As(err, &se) && strings.HasPrefix(se.Message, se.Err) {
		msg = se.Message
	}
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(slices.DeleteFunc(lines, func(l string) bool { return l == "" }), " ")
}

func (r *Runner) closeSession() {
	r.mu.Lock()
	wd := r.wd
	r.wd = nil
	r.mu.Unlock()
	if wd != nil {
		wd.Quit()
	}
}

// runOne runs t; its error is ErrSession's, when no session can be had.
func (r *Runner) runOne(ctx context.Context, t Test) (Result, error) {
	start := time.Now()
	r.Server.TakeUnsupported() // an earlier test's
	res, err := r.load(ctx, t)
	if errors.Is(err, ErrSession) {
		return Result{}, err
	}
	res.Test = t.URL
	res.Duration = time.Since(start)
	if err != nil {
		res.Status, res.Message = StatusCrash, err.Error()
		if errors.Is(err, errHung) {
			res.Status = StatusTimeout
		}
		if ctx.Err() == nil { // else interrupted: the run has left it
			r.log().Warn("test did not complete", "test", t.URL, "status", res.Status, "err", err)
		}
		// Whatever state the browser is in, the next test gets a new one.
		r.closeSession()
	}
	res.Message = withUnsupported(res, r.Server.TakeUnsupported())
	return res, nil
}

var errHung = errors.New("the page did not report within its timeout")

// hasCode says whether err is the driver's W3C error code (not a
// transport's "i/o timeout", which is a lost browser).
func hasCode(err error, code string) bool {
	var we *selenium.Error
	return errors.As(err, &we) && we.Err == code
}

// withUnsupported is res's message, saying which Python handlers the test
// asked for that wdext does not run (each answered 501), when the test
// did not pass: the likely reason.
func withUnsupported(res Result, py []string) string {
	if len(py) == 0 || (res.Status == StatusOK && !slices.ContainsFunc(res.Subtests, func(s SubtestResult) bool { return s.Status != StatusPass })) {
		return res.Message
	}
	note := "wdext does not run the Python handler(s) " + strings.Join(slices.Compact(slices.Sorted(slices.Values(py))), ", ") + " (answered 501)"
	if res.Message == "" {
		return note
	}
	return res.Message + "; " + note
}

// load opens the test page and serves its testdriver actions until the
// harness reports.
func (r *Runner) load(ctx context.Context, t Test) (Result, error) {
	wd, err := r.session()
	if err != nil {
		return Result{}, err
	}
	timeout := t.Timeout(r.TimeoutMultiplier)
	deadline := time.Now().Add(timeout + grace)
	if err := wd.SetPageLoadTimeout(timeout + grace); err != nil {
		return Result{}, err
	}
	if err := wd.Get(r.Server.URL(t.URL)); err != nil {
		if hasCode(err, "timeout") {
			return Result{}, fmt.Errorf("%w: loading it took longer than %v", errHung, timeout+grace)
		}
		return Result{}, fmt.Errorf("loading %s: %w", t.URL, err)
	}
	defer wd.Get("about:blank")
	for {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return Result{}, errHung
		}
		if err := wd.SetAsyncScriptTimeout(left); err != nil {
			return Result{}, err
		}
		raw, err := wd.ExecuteScriptAsync(`const done = arguments[arguments.length - 1];
			if (!window.__wdext) { done(JSON.stringify({type: "error", message: "testharnessreport.js did not load: not a testharness.js test?"})); return; }
			window.__wdext.wait(done);`, nil)
		if err != nil {
			if hasCode(err, "script timeout") {
				return Result{}, errHung
			}
			return Result{}, err
		}
		var msg struct {
			Type    string          `json:"type"`
			Message string          `json:"message"`
			Payload json.RawMessage `json:"payload"`
			ID      int             `json:"id"`
			Action  string          `json:"action"`
			Args    struct {
				Selector string `json:"selector"`
				Keys     string `json:"keys"`
			} `json:"args"`
			Attachments []pageAttachment `json:"attachments"`
			Forced      [][2]float64     `json:"forced"`
		}
		s, _ := raw.(string)
		if err := json.Unmarshal([]byte(s), &msg); err != nil {
			return Result{}, fmt.Errorf("runner protocol: %q: %w", s, err)
		}
		switch msg.Type {
		case "complete":
			res, err := ParseHarnessResult(t.URL, msg.Payload)
			if err == nil {
				res.Attachments = attachments(msg.Attachments)
				for _, f := range msg.Forced {
					res.Forced = append(res.Forced, Span{f[0], f[1]})
				}
			}
			return res, err
		case "error":
			return Result{Status: StatusError, Message: msg.Message}, nil
		case "action":
			actErr := r.perform(ctx, wd, msg.Action, msg.Args.Selector, msg.Args.Keys)
			errText := ""
			if actErr != nil {
				errText = actErr.Error()
			}
			if _, err := wd.ExecuteScript(`window.__wdext.settle(arguments[0], arguments[1])`, []any{msg.ID, errText}); err != nil {
				return Result{}, err
			}
		default:
			return Result{}, fmt.Errorf("runner protocol: unknown message %q", s)
		}
	}
}

// pageAttachment is an attachment as testharnessreport.js sends it: the
// result as JSON text (JSON.stringify'd when it was handed over).
type pageAttachment struct {
	Kind       string  `json:"kind"`
	Name       string  `json:"name"`
	Data       string  `json:"data"`
	TimeOrigin float64 `json:"timeOrigin"`
}

// attachments decodes what the page handed over; data that is not JSON
// (a value JSON.stringify could not write) becomes an "error" attachment
// saying so.
func attachments(in []pageAttachment) []Attachment {
	var out []Attachment
	for _, a := range in {
		data := json.RawMessage(a.Data)
		if !json.Valid(data) {
			msg, _ := json.Marshal("not JSON: " + a.Data)
			a.Kind, data = "error", msg
		}
		out = append(out, Attachment{Kind: a.Kind, Name: a.Name, Data: data, TimeOrigin: a.TimeOrigin})
	}
	return out
}

// perform runs one testdriver action: force_sample through wdext's
// WebDriver command, the others in the top document.
func (r *Runner) perform(ctx context.Context, wd selenium.WebDriver, action, selector, keys string) error {
	if action == "force_sample" {
		// Straight to the command, nothing before it: the force itself
		// keeps the page from sampling anything but the forced sample
		// (see forcesample's package doc), whatever the page, the
		// harness or the driver do meanwhile.
		c := &wdclient.Client{URL: r.WebDriver}
		return c.ForceSample(ctx, wd.SessionID())
	}
	el, err := wd.FindElement(selenium.ByCSSSelector, selector)
	if err != nil {
		return err
	}
	switch action {
	case "click":
		return el.Click()
	case "send_keys":
		return el.SendKeys(keys)
	}
	return fmt.Errorf("testdriver action %q is not supported by wdext", action)
}

// FindTestharness returns testharness.js to serve: an explicit file, or nil
// when the tree has its own (resources/testharness.js), or the npm package
// wpt-runner's copy: the one scripts/deps.sh installs (under .cache/ or
// node_modules/ of this or a parent directory of the working directory or
// the tree), else the one `wdext setup` put in the user's cache
// ([CachedTestharness]). Without any, the error tells the command to run.
func FindTestharness(explicit, root string) ([]byte, error) {
	if explicit != "" {
		return os.ReadFile(explicit)
	}
	if _, err := os.Stat(filepath.Join(root, "resources", "testharness.js")); err == nil {
		return nil, nil
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if abs, err := filepath.Abs(root); err == nil {
		starts = append(starts, abs)
	}
	if b, _ := findCheckoutHarness(starts...); b != nil {
		return b, nil
	}
	if b, err := readCachedHarness(); err == nil {
		return b, nil
	}
	return nil, errNoHarness(root)
}
