package wpt

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tebeka/selenium"

	"github.com/wdext/wdext/webdriver/wdclient"
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
// samples (on Chromium, the most recently started one of each isolate),
// whatever the page, testharness.js and chromedriver do meanwhile (the
// force keeps them from sampling with it; see package forcesample). The
// samples the browser takes by itself (at a profiler's start, at stop(),
// every sampleInterval, at V8 deoptimizations of the page's code) are in
// the profiles too: a test counts forced samples exactly when it counts
// between two marks, with a sampleInterval longer than that span, as the
// bundled js-self-profiling tests do.
type Runner struct {
	// WebDriver is the endpoint sessions are created at (wdext).
	WebDriver string
	// Capabilities for new sessions; nil means ChromeCapabilities().
	Capabilities selenium.Capabilities
	Server       *Server
	// Testharness is testharness.js itself; nil serves the tree's own
	// /resources/testharness.js.
	Testharness []byte
	// TimeoutMultiplier scales every test's timeout (<= 0 means 1).
	TimeoutMultiplier float64
	// Done, if set, is called as each result arrives (progress lines).
	Done func(Result)
	Log  *slog.Logger

	mu sync.Mutex
	wd selenium.WebDriver
}

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
	r.Server.Mount("/resources/testharnessreport.js", Static("text/javascript; charset=utf-8", []byte(report)))
	r.Server.Mount("/resources/testdriver.js", Static("text/javascript; charset=utf-8", testdriverJS))
	r.Server.Mount("/resources/testdriver-vendor.js", Static("text/javascript; charset=utf-8", testdriverVendorJS))
	if r.Testharness != nil {
		r.Server.Mount("/resources/testharness.js", Static("text/javascript; charset=utf-8", r.Testharness))
	}
}

// Run runs the tests in order and returns their results. A page that hangs
// is a TIMEOUT, one whose browser went away a CRASH; either way the run
// goes on in a new session. Run stops early only when ctx ends.
func (r *Runner) Run(ctx context.Context, tests []Test) ([]Result, error) {
	defer r.closeSession()
	var results []Result
	for _, t := range tests {
		if err := ctx.Err(); err != nil {
			return results, err
		}
		res := r.runOne(ctx, t)
		results = append(results, res)
		if r.Done != nil {
			r.Done(res)
		}
	}
	return results, nil
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
	if caps == nil {
		caps = ChromeCapabilities()
	}
	wd, err := selenium.NewRemote(caps, r.WebDriver)
	if err != nil {
		return nil, fmt.Errorf("new session at %s: %w", r.WebDriver, err)
	}
	r.wd = wd
	return wd, nil
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

func (r *Runner) runOne(ctx context.Context, t Test) Result {
	start := time.Now()
	res, err := r.load(ctx, t)
	res.Test = t.URL
	res.Duration = time.Since(start)
	if err != nil {
		res.Status, res.Message = StatusCrash, err.Error()
		if errors.Is(err, errHung) {
			res.Status = StatusTimeout
		}
		r.log().Warn("test did not complete", "test", t.URL, "status", res.Status, "err", err)
		// Whatever state the browser is in, the next test gets a new one.
		r.closeSession()
	}
	return res
}

var errHung = errors.New("the page did not report within its timeout")

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
		if strings.Contains(err.Error(), "timeout") {
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
			if strings.Contains(err.Error(), "script timeout") {
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
		}
		s, _ := raw.(string)
		if err := json.Unmarshal([]byte(s), &msg); err != nil {
			return Result{}, fmt.Errorf("runner protocol: %q: %w", s, err)
		}
		switch msg.Type {
		case "complete":
			return ParseHarnessResult(t.URL, msg.Payload)
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

// perform runs one testdriver action: force_sample through wdext's
// WebDriver command, the others in the top document.
func (r *Runner) perform(ctx context.Context, wd selenium.WebDriver, action, selector, keys string) error {
	if action == "force_sample" {
		// Straight to the command, nothing before it: the force itself
		// keeps the page from sampling anything but the forced sample
		// (see forcesample's package doc), whatever the page, the
		// harness or chromedriver do meanwhile.
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
// when the tree has its own, or the npm package wpt-runner's copy that
// scripts/deps.sh installs (under .cache/ or node_modules/ of this or a
// parent directory of the working directory or the tree).
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
	for _, start := range starts {
		for d := start; ; d = filepath.Dir(d) {
			for _, rel := range []string{".cache/wpt-runner/package/testharness/testharness.js", "node_modules/wpt-runner/testharness/testharness.js"} {
				if b, err := os.ReadFile(filepath.Join(d, rel)); err == nil {
					return b, nil
				}
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return nil, errors.New("no testharness.js: pass --testharness, use --wpt-root with a WPT checkout, or run scripts/deps.sh (installs the npm package wpt-runner)")
}

// ChromeCapabilities are what the runner asks for by default: Chrome, with
// measureUserAgentSpecificMemory() answering at once rather than at the
// next scheduled GC 10–20 s later (Blink's ForceEagerMeasureMemory switch).
func ChromeCapabilities() selenium.Capabilities {
	return selenium.Capabilities{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{
			"args": []string{"--enable-blink-features=ForceEagerMeasureMemory"},
		},
	}
}
