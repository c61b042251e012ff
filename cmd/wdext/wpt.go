package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/wdext/wdext/engine/kind"
	"github.com/wdext/wdext/wpt"
)

// wptFlags are the flags of `wdext wpt`: the driver flags it shares with
// serve (its wdext server is its own, on loopback, so serve's listening
// flags do not apply) and its own.
type wptFlags struct {
	driver        driverFlags
	root          string
	report, junit string
	html          string
	expected      string
	multiplier    float64
	harness       string
	experimental  bool
	stackSamples  bool
	// explicitExpected: --expected was given (possibly as '' for none).
	explicitExpected bool
}

func (f *wptFlags) register(fs *flag.FlagSet, kinds kind.List) {
	f.driver.register(fs, kinds)
	fs.StringVar(&f.root, "wpt-root", "", "the WPT root: PATHs are relative to it (default: found above the first PATH, see above)")
	fs.StringVar(&f.report, "report", "", "write results in wptreport JSON to this file (also when interrupted)")
	fs.StringVar(&f.junit, "junit", "", "write results as JUnit XML to this file (also when interrupted)")
	fs.StringVar(&f.html, "html", "", "write an HTML report to this file (also when interrupted): results, and per test the traces and memory results it got (test_driver.wdext_attach, Profiler.stop(), measureUserAgentSpecificMemory()) drawn")
	fs.StringVar(&f.expected, "expected", "", "expectations: a JSON file, a WPT metadata .ini file or directory (default: expectations-PRODUCT.json, else expectations.json, at the root; '' for none)")
	fs.Float64Var(&f.multiplier, "timeout-multiplier", 1, "multiply every test's timeout (10 s, or 60 s for long tests)")
	fs.StringVar(&f.harness, "testharness", "", "testharness.js to serve (default: the tree's own, else the npm package wpt-runner's: see above)")
	fs.BoolVar(&f.experimental, "enable-experimental", false, "turn on the browser's experimental web platform features, like wptrunner's flag")
	fs.BoolVar(&f.stackSamples, "stack-samples", false, "test_driver.force_sample() samples with its caller on the stack (WPT RFC 81) on Chromium too, and every callback samples: forced counts are no longer exact (docs/forcesample.md)")
}

const wptUsage = `usage: wdext wpt [flags] PATH...
Runs testharness.js tests through a wdext it starts in-process, in front of its
own driver of the --engine browser (or --upstream URL).

PATH is a test file, a directory of tests, or a test URL (dir/a.any.worker.html,
a.html?variant); flags and PATHs may come in any order, and -- ends the flags.
Test IDs are paths below the WPT root: --wpt-root, else the nearest directory
at or above the first PATH that holds resources/testharness.js (a WPT checkout)
or a .wdext-wpt-root file (the bundled testdata/wpt), else the PATH directory
itself (a file's own directory). With --wpt-root, PATHs are relative to it
(or to the working directory, if they lie inside it); without PATHs it runs
the whole root.

Expectations: --expected, else expectations-PRODUCT.json or expectations.json
at the root when there is one (PRODUCT: wptrunner's name for the browser);
the exit status
is 1 only for unexpected results. testharness.js: --testharness, else the
tree's own, else the npm package wpt-runner's (scripts/deps.sh's .cache/ in a
checkout, or what "wdext setup" installs once per user).

Exit status: 0 all as expected, 1 unexpected results or an error, 2 bad usage,
130 (SIGINT) or 143 (SIGTERM) interrupted, after writing the summary and the
reports of the tests that finished.

wdext wpt serve [--wpt-root DIR] [PATH] serves the tree as a run does, for a
browser opened by hand, and says how to start one (wdext wpt serve -h).

examples:
  wdext wpt testdata/wpt --report out/wptreport.json     the bundled suite (make run)
  wdext wpt testdata/wpt/js-self-profiling/function-names.html
  wdext wpt testdata/wpt --html out/wpt.html             results, traces and memory results, drawn
  wdext wpt --wpt-root ~/wpt js-self-profiling/ measure-memory/

flags:
`

// wptCmd runs WPT-style testharness.js tests through a wdext it starts
// in-process, in front of the driver the flags choose among kinds. Its
// exit status is what main exits with; an error is printed as one line
// (and exits 1 when exit is 0).
func wptCmd(args []string, kinds kind.List) (exit int, err error) {
	if len(args) > 0 && args[0] == "serve" {
		return wptServeCmd(args[1:], kinds)
	}
	fs := flag.NewFlagSet("wpt", flag.ExitOnError)
	var f wptFlags
	f.register(fs, kinds)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), wptUsage)
		fs.PrintDefaults()
	}
	paths := parseInterleaved(fs, args)
	if f.root == "" && len(paths) == 0 {
		fmt.Fprintln(fs.Output(), "wdext wpt: no PATH: give a test directory or file (wdext wpt testdata/wpt), or --wpt-root DIR")
		fmt.Fprintln(fs.Output(), "run wdext wpt -h for more")
		return 2, nil
	}
	k, err := f.driver.kind()
	if err != nil {
		return 2, err
	}
	if f.experimental && !k.WPT.Experimental {
		return 2, fmt.Errorf("--enable-experimental turns on a browser's experimental web platform features: --engine %s has no switch for them", k.Name)
	}
	fs.Visit(func(fl *flag.Flag) { f.explicitExpected = f.explicitExpected || fl.Name == "expected" })
	// What can be checked before a browser starts is, first (the default
	// expectations wait for the browser's product).
	s, err := f.suite(paths)
	if err != nil {
		return 1, err
	}
	var endDriver atomic.Pointer[func()] // once there is one: for a second signal
	ctx, stopSignals := signalContext(func() {
		if f := endDriver.Load(); f != nil {
			(*f)()
		}
	})
	defer stopSignals()
	return f.run(ctx, k, s, &endDriver)
}

// suite is what a run runs, settled before a browser starts.
type suite struct {
	root        string
	tests       []wpt.Test
	testharness []byte // nil: the tree's own
	exp         wpt.Expectations
	expFrom     string
}

// suite selects the tests and loads what they need: testharness.js and
// the expectations --expected names.
func (f *wptFlags) suite(paths []string) (*suite, error) {
	root, tests, err := selectTests(f.root, paths)
	if err != nil {
		return nil, err
	}
	th, err := wpt.FindTestharness(f.harness, root)
	if err != nil {
		return nil, err
	}
	s := &suite{root: root, tests: tests, testharness: th}
	if f.explicitExpected && f.expected != "" {
		if s.exp, err = wpt.LoadExpectations(f.expected); err != nil {
			return nil, err
		}
		s.expFrom = f.expected
	}
	return s, nil
}

// run starts the wdext server and the WPT server, runs s on kind k's
// browser, and writes the summary and the reports; endDriver gets what
// ends the driver at once (for a second signal).
func (f *wptFlags) run(ctx context.Context, k kind.Kind, s *suite, endDriver *atomic.Pointer[func()]) (int, error) {
	st, base, stopServe, err := f.serve(ctx, endDriver)
	if err != nil {
		if ctx.Err() != nil {
			return exitStatus(ctx), nil
		}
		return 1, err
	}
	srv, err := wpt.NewServer(s.root, serverOptions(k))
	if err != nil {
		stopServe()
		return 1, err
	}
	runner := &wpt.Runner{
		WebDriver:         base,
		Server:            srv,
		Testharness:       s.testharness,
		TimeoutMultiplier: f.multiplier,
		Log:               st.log,
		Capture:           f.html != "",
		StackSamples:      f.stackSamples,
	}
	// Teardown: the runner's session, and a test an interruption left
	// under way, end when the wdext server stops. Interrupted, the browser
	// is not asked (it may be busy with the test for a while): the driver
	// and its browsers are ended at once.
	defer func() {
		if ctx.Err() != nil {
			st.upstream.Close()
		}
		stopServe()
		runner.Close()
		srv.Close()
	}()
	if err := srv.Start(context.Background()); err != nil {
		return 1, err
	}
	runner.Mount()
	var product string
	runner.Capabilities, product = sessionCapabilities(k, f.experimental, srv)
	if err := runner.Start(); err != nil {
		if ctx.Err() != nil {
			return exitStatus(ctx), nil
		}
		if !f.driver.managed() {
			return 1, fmt.Errorf("%w (--upstream %s)", err, f.driver.upstream)
		}
		return 1, err
	}
	returned := map[string]any{}
	if sess, ok := st.server.Sessions().Get(runner.SessionID()); ok && sess.Capabilities != nil {
		returned = sess.Capabilities
	}
	product = productOf(product, &f.driver, returned)
	if !f.explicitExpected {
		if s.exp, s.expFrom, err = defaultExpectations(s.root, product, f.stackSamples); err != nil {
			return 1, err
		}
	}
	info := runInfo(product, returned, f, s.testharness == nil)
	maps.Copy(info, st.runInfo)
	return f.runTests(ctx, runner, s, wpt.Run{Info: info})
}

// serve starts the run's wdext server on a loopback port, and its driver
// (a driver that cannot start is one error now, not a CRASH per test). The
// server outlives an interruption of ctx until stop, so that the report
// can be written; endDriver gets what ends the driver at once.
func (f *wptFlags) serve(ctx context.Context, endDriver *atomic.Pointer[func()]) (st *stack, base string, stop func(), err error) {
	sf := serverFlags{driverFlags: f.driver, listenFlags: defaultListen}
	if st, err = sf.build(); err != nil {
		return nil, "", nil, err
	}
	closeUpstream := func() { st.upstream.Close() }
	endDriver.Store(&closeUpstream)
	if err := st.start(ctx); err != nil {
		st.upstream.Close()
		return nil, "", nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		st.upstream.Close()
		return nil, "", nil, err
	}
	serveCtx, stopServe := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- st.run(serveCtx, l, 0) }() // owned by stop
	stop = func() {
		stopServe()
		<-served
	}
	return st, "http://" + l.Addr().String(), stop, nil
}

// runTests runs the tests with runner, prints the progress and the summary,
// and writes the reports.
func (f *wptFlags) runTests(ctx context.Context, runner *wpt.Runner, s *suite, run wpt.Run) (int, error) {
	on := run.Info["product"].(string)
	if v, ok := run.Info["browser_version"].(string); ok && v != "" {
		on += " " + v
	}
	fmt.Printf("wdext wpt: %s in %s on %s\n", plural(len(s.tests), "test"), s.root, on)
	if s.expFrom != "" {
		fmt.Printf("expectations: %s\n", s.expFrom)
	}
	progress := wpt.NewProgress(os.Stdout, len(s.tests), s.exp)
	runner.Done = progress.Done
	run.Start = time.Now()
	var runErr error
	run.Results, runErr = runner.Run(ctx, s.tests)
	run.End = time.Now()
	stopped := ctx.Err() != nil
	if stopped {
		fmt.Printf("Interrupted (%v): %d of %d tests finished; the reports hold them.\n", context.Cause(ctx), len(run.Results), len(s.tests))
	}
	if err := wpt.WriteSummary(os.Stdout, run, s.exp); err != nil {
		return 1, err
	}
	if err := errors.Join(
		writeFile(f.report, func(w io.Writer) error { return wpt.WriteWPTReport(w, run, s.exp) }),
		writeFile(f.junit, func(w io.Writer) error { return wpt.WriteJUnit(w, run, s.exp) }),
		writeHTML(f.html, s.root, run, s.exp),
	); err != nil {
		return 1, err
	}
	switch {
	case stopped:
		return exitStatus(ctx), nil
	case runErr != nil:
		return 1, fmt.Errorf("the run stopped after %d of %d tests: %w", len(run.Results), len(s.tests), runErr)
	}
	return wpt.ExitCode(run.Results, s.exp), nil
}
