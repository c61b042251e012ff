package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tebeka/selenium"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine/webkitgtk"
	"github.com/wdext/wdext/report"
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
}

func (f *wptFlags) register(fs *flag.FlagSet) {
	f.driver.register(fs)
	fs.StringVar(&f.root, "wpt-root", "", "the WPT root: PATHs are relative to it (default: found above the first PATH, see above)")
	fs.StringVar(&f.report, "report", "", "write results in wptreport JSON to this file (also when interrupted)")
	fs.StringVar(&f.junit, "junit", "", "write results as JUnit XML to this file (also when interrupted)")
	fs.StringVar(&f.html, "html", "", "write an HTML report to this file (also when interrupted): results, and per test the traces and memory results it got (test_driver.wdext_attach, Profiler.stop(), measureUserAgentSpecificMemory()) drawn")
	fs.StringVar(&f.expected, "expected", "", "expectations: a JSON file, a WPT metadata .ini file or directory (default: expectations-PRODUCT.json, else expectations.json, at the root; '' for none)")
	fs.Float64Var(&f.multiplier, "timeout-multiplier", 1, "multiply every test's timeout (10 s, or 60 s for long tests)")
	fs.StringVar(&f.harness, "testharness", "", "testharness.js to serve (default: the tree's own, else the npm package wpt-runner's: see above)")
	fs.BoolVar(&f.experimental, "enable-experimental", false, "turn on Chromium's experimental web platform features (--enable-experimental-web-platform-features), like wptrunner's flag")
}

const wptUsage = `usage: wdext wpt [flags] PATH...
Runs testharness.js tests through a wdext it starts in-process, in front of its
own chromedriver (or --engine webkitgtk, or --upstream URL).

PATH is a test file, a directory of tests, or a test URL (dir/a.any.worker.html,
a.html?variant); flags and PATHs may come in any order, and -- ends the flags.
Test IDs are paths below the WPT root: --wpt-root, else the nearest directory
at or above the first PATH that holds resources/testharness.js (a WPT checkout)
or a .wdext-wpt-root file (the bundled testdata/wpt), else the PATH directory
itself (a file's own directory). With --wpt-root, PATHs are relative to it
(or to the working directory, if they lie inside it); without PATHs it runs
the whole root.

Expectations: --expected, else expectations-PRODUCT.json or expectations.json
at the root when there is one (PRODUCT: chrome or webkitgtk); the exit status
is 1 only for unexpected results. testharness.js: --testharness, else the
tree's own, else the npm package wpt-runner's (scripts/deps.sh's .cache/ in a
checkout, or what "wdext setup" installs once per user).

Exit status: 0 all as expected, 1 unexpected results or an error, 2 bad usage,
130 (SIGINT) or 143 (SIGTERM) interrupted, after writing the summary and the
reports of the tests that finished.

examples:
  wdext wpt testdata/wpt --report out/wptreport.json     the bundled suite (make run)
  wdext wpt testdata/wpt/js-self-profiling/function-names.html
  wdext wpt testdata/wpt --html out/wpt.html             results, traces and memory results, drawn
  wdext wpt --wpt-root ~/wpt js-self-profiling/ measure-memory/

flags:
`

// wptCmd runs WPT-style testharness.js tests through a wdext it starts
// in-process. Its exit status is what main exits with; an error is printed
// as one line (and exits 1 when exit is 0).
func wptCmd(args []string) (exit int, err error) {
	fs := flag.NewFlagSet("wpt", flag.ExitOnError)
	var f wptFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), wptUsage)
		fs.PrintDefaults()
	}
	paths := parseInterleaved(fs, args)
	explicit := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { explicit[fl.Name] = true })
	if f.root == "" && len(paths) == 0 {
		fmt.Fprintln(fs.Output(), "wdext wpt: no PATH: give a test directory or file (wdext wpt testdata/wpt), or --wpt-root DIR")
		fmt.Fprintln(fs.Output(), "run wdext wpt -h for more")
		return 2, nil
	}
	if f.experimental && f.webkitgtk() {
		return 2, errors.New("--enable-experimental turns on a Chromium feature switch: not with --engine webkitgtk")
	}

	// What can be checked before a browser starts is, first (the default
	// expectations wait for the browser's product).
	root, tests, err := selectTests(f.root, paths)
	if err != nil {
		return 1, err
	}
	th, err := wpt.FindTestharness(f.harness, root)
	if err != nil {
		return 1, err
	}
	exp, expFrom := wpt.Expectations(nil), ""
	if explicit["expected"] && f.expected != "" {
		if exp, err = wpt.LoadExpectations(f.expected); err != nil {
			return 1, err
		}
		expFrom = f.expected
	}

	var endDriver atomic.Pointer[func()] // once there is one: for a second signal
	ctx, caught, stopSignals := signalContext(func() {
		if f := endDriver.Load(); f != nil {
			(*f)()
		}
	})
	defer stopSignals()
	interrupted := func() int {
		if caught() == syscall.SIGTERM {
			return 128 + int(syscall.SIGTERM)
		}
		return 128 + int(syscall.SIGINT)
	}

	sf := serverFlags{driverFlags: f.driver, listenFlags: defaultListen}
	st, err := sf.build()
	if err != nil {
		return 1, err
	}
	closeUpstream := func() { st.upstream.Close() }
	endDriver.Store(&closeUpstream)
	// A driver that cannot start is one error now, not a CRASH per test.
	if m, ok := st.upstream.(*driver.Chromedriver); ok {
		if err := startChromedriver(ctx, m); err != nil {
			st.upstream.Close()
			if ctx.Err() != nil {
				return interrupted(), nil
			}
			return 1, err
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		st.upstream.Close()
		return 1, err
	}
	// The server outlives an interruption until the report is written.
	serveCtx, stopServe := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- st.run(serveCtx, l, 0) }() // owned here: stopped below

	srv, err := wpt.NewServer(root, serverOptions(&f))
	if err != nil {
		stopServe()
		<-served
		return 1, err
	}
	runner := &wpt.Runner{
		WebDriver:         "http://" + l.Addr().String(),
		Server:            srv,
		Testharness:       th,
		TimeoutMultiplier: f.multiplier,
		Log:               st.log,
		Capture:           f.html != "",
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
		<-served
		runner.Close()
		srv.Close()
	}()
	if err := srv.Start(serveCtx); err != nil {
		return 1, err
	}
	runner.Mount()
	var product string
	runner.Capabilities, product = sessionCapabilities(&f, srv)

	if err := runner.Start(); err != nil {
		if ctx.Err() != nil {
			return interrupted(), nil
		}
		if f.driver.upstream != "" {
			return 1, fmt.Errorf("%w (--upstream %s)", err, f.driver.upstream)
		}
		return 1, err
	}
	returned := map[string]any{}
	if sess, ok := st.server.Sessions().Get(runner.SessionID()); ok && sess.Capabilities != nil {
		returned = sess.Capabilities
	}
	product = productOf(product, &f, returned)
	if !explicit["expected"] {
		if exp, expFrom, err = defaultExpectations(root, product); err != nil {
			return 1, err
		}
	}
	run := wpt.Run{Info: runInfo(product, returned, &f, th == nil)}

	on := product
	if v, ok := run.Info["browser_version"].(string); ok && v != "" {
		on += " " + v
	}
	fmt.Printf("wdext wpt: %s in %s on %s\n", plural(len(tests), "test"), root, on)
	if expFrom != "" {
		fmt.Printf("expectations: %s\n", expFrom)
	}
	progress := wpt.NewProgress(os.Stdout, len(tests), exp)
	runner.Done = progress.Done
	run.Start = time.Now()
	var runErr error
	run.Results, runErr = runner.Run(ctx, tests)
	run.End = time.Now()
	stopped := ctx.Err() != nil
	if stopped {
		fmt.Printf("Interrupted (%v): %d of %d tests finished; the reports hold them.\n", caught(), len(run.Results), len(tests))
	}
	if err := wpt.WriteSummary(os.Stdout, run, exp); err != nil {
		return 1, err
	}
	if err := errors.Join(
		writeFile(f.report, func(w io.Writer) error { return wpt.WriteWPTReport(w, run, exp) }),
		writeFile(f.junit, func(w io.Writer) error { return wpt.WriteJUnit(w, run, exp) }),
		writeHTML(f.html, root, run, exp),
	); err != nil {
		return 1, err
	}
	switch {
	case stopped:
		return interrupted(), nil
	case runErr != nil:
		return 1, fmt.Errorf("the run stopped after %d of %d tests: %w", len(run.Results), len(tests), runErr)
	}
	return wpt.ExitCode(run.Results, exp), nil
}

// writeHTML writes the run's HTML report (package report) to name, if
// given.
func writeHTML(name, root string, run wpt.Run, exp wpt.Expectations) error {
	if name == "" {
		return nil
	}
	p := report.Page{Title: "wdext wpt: " + root}
	if !run.Start.IsZero() {
		p.Subtitle = "run of " + run.Start.Format("2006-01-02 15:04:05 MST")
	}
	p.AddWPT(run, exp)
	return writeReport(name, &p)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func writeFile(name string, fn func(io.Writer) error) error {
	if name == "" {
		return nil
	}
	out, err := os.Create(name)
	if err != nil {
		return err
	}
	return errors.Join(fn(out), out.Close())
}

// parseInterleaved parses the flags in args wherever they are (Go's flag
// package stops at the first non-flag) and returns the other arguments;
// "--" ends the flags. A flag's value is the next argument unless the flag
// is boolean or written -name=value.
func parseInterleaved(fs *flag.FlagSet, args []string) (positional []string) {
	var flags []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if strings.Contains(name, "=") {
			continue
		}
		fl := fs.Lookup(name)
		if fl == nil {
			continue // fs.Parse reports it
		}
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	fs.Parse(flags) // ExitOnError: a bad flag exits 2 with the reason and the usage
	return append(positional, fs.Args()...)
}

// selectTests finds the WPT root (rootFlag, or the one the paths are in)
// and the tests the paths name. Errors name the paths as typed.
func selectTests(rootFlag string, paths []string) (root string, tests []wpt.Test, err error) {
	typed := map[string]string{} // root-relative path → as typed
	var rels []string
	add := func(rel, p string) {
		if _, ok := typed[rel]; !ok {
			typed[rel] = p
		}
		rels = append(rels, rel)
	}
	if rootFlag != "" {
		if root, err = filepath.Abs(rootFlag); err != nil {
			return "", nil, err
		}
		if fi, err := os.Stat(root); err != nil {
			return "", nil, fmt.Errorf("--wpt-root %s: %w", rootFlag, unwrapPath(err))
		} else if !fi.IsDir() {
			return "", nil, fmt.Errorf("--wpt-root %s: not a directory", rootFlag)
		}
		for _, p := range paths {
			rel, err := underRoot(root, rootFlag, p)
			if err != nil {
				return "", nil, err
			}
			add(rel, p)
		}
	} else {
		rootOf := ""
		for _, p := range paths {
			r, err := rootFor(p)
			if err != nil {
				return "", nil, err
			}
			if root == "" {
				root, rootOf = r, p
			} else if r != root {
				return "", nil, fmt.Errorf("%s and %s are in different WPT roots (%s, %s): run them apart, or give --wpt-root", rootOf, p, root, r)
			}
			abs, err := filepath.Abs(p)
			if err != nil {
				return "", nil, err
			}
			rel, err := filepath.Rel(root, abs)
			if err != nil {
				return "", nil, err
			}
			add(filepath.ToSlash(rel), p)
		}
	}
	tests, err = wpt.Discover(root, rels)
	var pe *wpt.PathError
	if errors.As(err, &pe) {
		p := typed[pe.Path]
		if p == "" {
			p = pe.Path
		}
		if rootFlag != "" && !filepath.IsAbs(p) {
			return "", nil, fmt.Errorf("%s: %v (in --wpt-root %s)", p, pe.Err, rootFlag)
		}
		return "", nil, fmt.Errorf("%s: %v", p, pe.Err)
	}
	return root, tests, err
}

// rootFor is the WPT root of p without --wpt-root: the marked one above
// it, else p itself (a directory) or p's directory (a file).
func rootFor(p string) (string, error) {
	r, err := wpt.FindRoot(p)
	if err != nil || r != "" {
		return r, err
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		// Maybe a test URL (a.any.worker.html, a.html?x) in a tree without
		// marker: its directory, if that exists.
		if fi, derr := os.Stat(filepath.Dir(abs)); derr == nil && fi.IsDir() && !strings.HasSuffix(p, string(filepath.Separator)) {
			return filepath.Dir(abs), nil
		}
		return "", fmt.Errorf("%s: %w", p, wpt.ErrNoSuchTest)
	case fi.IsDir():
		return abs, nil
	default:
		return filepath.Dir(abs), nil
	}
}

// underRoot makes p, as typed with --wpt-root, relative to root: a path
// below the root (as WPT's own command takes them, with or without a
// leading /), or a file name inside it (relative to the working directory,
// or absolute).
func underRoot(root, rootFlag, p string) (string, error) {
	inside := func(abs string) (string, bool) {
		rel, err := filepath.Rel(root, abs)
		if err != nil || !(rel == "." || filepath.IsLocal(rel)) {
			return "", false
		}
		return filepath.ToSlash(rel), true
	}
	if filepath.IsAbs(p) {
		if rel, ok := inside(p); ok {
			return rel, nil
		}
		if _, err := os.Stat(p); err == nil {
			return "", fmt.Errorf("%s: not inside --wpt-root %s", p, rootFlag)
		}
		return p, nil // a URL path, /dir/test.html
	}
	if _, err := os.Stat(filepath.Join(root, p)); err == nil && filepath.IsLocal(p) {
		return filepath.ToSlash(p), nil
	}
	if abs, err := filepath.Abs(p); err == nil {
		if _, err := os.Stat(abs); err == nil {
			if rel, ok := inside(abs); ok {
				return rel, nil
			}
			return "", fmt.Errorf("%s: not inside --wpt-root %s", p, rootFlag)
		}
	}
	return filepath.ToSlash(p), nil // a test URL, or nothing: Discover says
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// signalContext is a context that SIGINT or SIGTERM ends; caught says
// which ended it. A second signal ends wdext at once, after hard (which
// ends the driver and its browsers: they would outlive a wdext killed by
// the default action).
func signalContext(hard func()) (ctx context.Context, caught func() os.Signal, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	var mu sync.Mutex
	var got os.Signal
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // owned by signalContext's stop, which waits for it
		defer wg.Done()
		select {
		case s := <-c:
			mu.Lock()
			got = s
			mu.Unlock()
			fmt.Fprintf(os.Stderr, "wdext: %v: stopping, writing the report of the tests that finished (again to quit at once)\n", s)
			cancel()
		case <-done:
			return
		}
		select {
		case s := <-c:
			fmt.Fprintf(os.Stderr, "wdext: %v again: ending the browsers and quitting\n", s)
			hard()
			os.Exit(128 + int(s.(syscall.Signal)))
		case <-done:
		}
	}()
	caught = func() os.Signal {
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			signal.Stop(c)
			close(done)
			wg.Wait()
			cancel()
		})
	}
	return ctx, caught, stop
}

// serverOptions configure the wptserve emulation for a run, as wptserve
// and wptrunner arrange it: two HTTP and two HTTPS ports (WPT's
// /common/get-host-info.sub.js needs {{ports[http][1]}} and the HTTPS
// origins), and on Chromium WPT's own host names (web-platform.test,
// www1.…), which it is told to resolve to loopback. WebKitGTK cannot be
// told so: it gets the loopback names (see package wpt, "Hosts and ports").
func serverOptions(f *wptFlags) wpt.Options {
	if f.webkitgtk() {
		// Each document carries the Profiler polyfill and its
		// Document-Policy, before its own scripts: on https there is no
		// injecting proxy, and the inspector tells the policy only once
		// the document's context exists (webkitgtk.InjectProfiler).
		return wpt.Options{MainHost: "localhost", SecondPort: true, HTTPS: true, Document: webkitgtk.InjectProfiler}
	}
	return wpt.Options{WPTHosts: true, SecondPort: true, HTTPS: true}
}

// webkitgtk says whether the run's browser is the WebKitGTK wdext starts.
func (f *wptFlags) webkitgtk() bool {
	return f.driver.engine == "webkitgtk" && f.driver.upstream == ""
}

// sessionCapabilities are what the runner's sessions ask for, to run the
// tests srv (started) serves, and the product they are expected to be
// (productOf settles it from the browser's answer).
func sessionCapabilities(f *wptFlags, srv *wpt.Server) (caps selenium.Capabilities, product string) {
	if f.webkitgtk() {
		return wpt.WebKitGTKCapabilities(srv), "webkitgtk"
	}
	return wpt.ChromeCapabilities(srv, f.experimental), "chrome"
}

// productOf is the wptrunner-style product of the browser that answered:
// what was asked for, unless an --upstream browser says otherwise.
func productOf(asked string, f *wptFlags, returned map[string]any) string {
	if f.driver.upstream == "" {
		return asked
	}
	name, _ := returned["browserName"].(string)
	switch n := strings.ToLower(name); {
	case n == "":
		return asked
	case strings.Contains(n, "chrom"):
		return "chrome"
	case n == "minibrowser" || strings.Contains(n, "webkitgtk"):
		return "webkitgtk"
	default:
		return n
	}
}

// defaultExpectations are the root's expectations-PRODUCT.json, else its
// expectations.json, else none.
func defaultExpectations(root, product string) (wpt.Expectations, string, error) {
	for _, name := range []string{"expectations-" + product + ".json", "expectations.json"} {
		p := filepath.Join(root, name)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		exp, err := wpt.LoadExpectations(p)
		if err != nil {
			return nil, "", err
		}
		return exp, p + " (found at the root; --expected to choose another, --expected '' for none)", nil
	}
	return nil, "", nil
}

// runInfo is the report's run_info, with wptrunner's keys where they
// apply (product, browser_version, os, os_version, processor, bits,
// headless) and the flags that change what tests see.
func runInfo(product string, returned map[string]any, f *wptFlags, ownHarness bool) map[string]any {
	info := map[string]any{
		"product":             product,
		"browser_version":     returned["browserVersion"],
		"os":                  runtime.GOOS,
		"os_version":          osVersion(),
		"processor":           processor(),
		"bits":                strconv.IntSize,
		"wdext":               strings.TrimSpace(strings.TrimPrefix(version(), "wdext ")),
		"timeout_multiplier":  f.multiplier,
		"enable_experimental": f.experimental,
	}
	if name, ok := returned["browserName"]; ok {
		info["browser"] = name
	}
	switch {
	case f.driver.upstream != "":
		info["upstream"] = true
	default:
		info["engine"] = f.driver.engine
	}
	if f.driver.upstream == "" && f.driver.engine == "chromium" {
		_, args := driver.ChromeMachineDefaults()
		info["headless"] = slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--headless") })
	}
	switch {
	case f.harness != "":
		info["testharness"] = f.harness
	case ownHarness:
		info["testharness"] = "the tree's own"
	default:
		info["testharness"] = wpt.HarnessPackage
	}
	return info
}

// osVersion is the distribution's version (/etc/os-release VERSION_ID, as
// mozinfo reports it), else the kernel's release.
func osVersion() string {
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VERSION_ID="); ok {
				return strings.Trim(v, `"'`)
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		return strings.TrimSpace(string(b))
	}
	return ""
}

// processor is GOARCH as mozinfo names it.
func processor() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "386":
		return "x86"
	case "arm64":
		return "aarch64"
	}
	return runtime.GOARCH
}
