package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tebeka/selenium"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/engine/registry"
	"github.com/wdext/wdext/engine/webkitgtk"
	"github.com/wdext/wdext/engine/webkitgtk/webkitgtktest"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/wpt"
)

// wptReport is what the tests read of a wptreport JSON file.
type wptReport struct {
	RunInfo map[string]any `json:"run_info"`
	Results []struct {
		Test   string `json:"test"`
		Status string `json:"status"`
	} `json:"results"`
}

// readReport reads the wptreport file name, and returns its bytes too
// (for messages).
func readReport(t *testing.T, name string) (wptReport, []byte) {
	t.Helper()
	b, err := os.ReadFile(name)
	assert.NilError(t, err)
	var rep wptReport
	assert.NilError(t, json.Unmarshal(b, &rep))
	return rep, b
}

// wdextIn runs the built wdext in dir with env added, for at most
// timeout; it returns stdout, stderr and the exit status (-1: killed at
// the timeout). Whatever it started is killed at the end.
func wdextIn(t *testing.T, dir string, env []string, timeout time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	mark := fmt.Sprintf("WDEXT_TEST_MARK=%s-%d-%d", strings.ReplaceAll(t.Name(), "/", "_"), os.Getpid(), time.Now().UnixNano())
	cmd := exec.CommandContext(ctx, wdextBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...), mark)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	for pid := range e2e.MarkedProcesses(mark) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		code = -1
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("wdext %v: %v", args, err)
	}
	return o.String(), e.String(), code
}

// repoRoot is the checkout's top directory (the tests run in cmd/wdext).
func repoRoot(t *testing.T) string {
	t.Helper()
	abs, err := filepath.Abs("../..")
	assert.NilError(t, err)
	return abs
}

// requireHarness skips (fails under WDEXT_REQUIRE_BROWSER) when the
// checkout has no testharness.js from scripts/deps.sh.
func requireHarness(t *testing.T) {
	t.Helper()
	if _, err := wpt.FindTestharness("", e2e.Testdata("wpt")); err != nil {
		if os.Getenv("WDEXT_REQUIRE_BROWSER") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// `wdext wpt --help` shows the flags that act for wpt, and none of
// serve's listening flags, which do nothing there.
func TestWPTHelp(t *testing.T) {
	_, errOut, code := run(t, 30*time.Second, "wpt", "--help")
	assert.Equal(t, code, 0, errOut)
	assert.Assert(t, strings.HasPrefix(errOut, "usage: wdext wpt [flags] PATH..."), errOut)
	for _, f := range []string{"wpt-root", "report", "junit", "expected", "timeout-multiplier", "testharness",
		"enable-experimental", "chromedriver", "engine", "webkitwebdriver", "upstream", "log-level"} {
		assert.Check(t, strings.Contains(errOut, "\n  -"+f+" ") || strings.Contains(errOut, "\n  -"+f+"\n"), "-%s missing:\n%s", f, errOut)
	}
	for _, f := range []string{"host", "port", "allowed-hosts", "allowed-origins", "max-body", "session-timeout", "max-sessions"} {
		assert.Check(t, !strings.Contains(errOut, "\n  -"+f), "serve's -%s listed:\n%s", f, errOut)
	}
	for _, want := range []string{"expectations-PRODUCT.json", ".wdext-wpt-root", "wdext setup", "130 (SIGINT)", "-- ends the flags"} {
		assert.Check(t, strings.Contains(errOut, want), "%q missing:\n%s", want, errOut)
	}
	// serve keeps all of its flags.
	_, errOut, code = run(t, 30*time.Second, "serve", "--help")
	assert.Equal(t, code, 0, errOut)
	for _, f := range []string{"host", "port", "allowed-hosts", "max-body", "session-timeout", "chromedriver", "log-level"} {
		assert.Check(t, strings.Contains(errOut, "\n  -"+f), "serve lost -%s:\n%s", f, errOut)
	}
}

// Mistakes a new user makes get one line naming the path as typed, and no
// browser is started for them.
func TestWPTPathErrors(t *testing.T) {
	repo := repoRoot(t)
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing file", []string{"wpt", "testdata/wpt/js-self-profiling/nope.html", "--report", "/nonexistent/r.json"}, 1,
			"wdext: testdata/wpt/js-self-profiling/nope.html: no such file or test\n"},
		{"missing directory", []string{"wpt", "--junit", "x.xml", "no-such-dir/"}, 1, "wdext: no-such-dir/: no such file or test\n"},
		{"not tests", []string{"wpt", "testdata/wpt/js-self-profiling/resources"}, 1, "wdext: testdata/wpt/js-self-profiling/resources: no tests there"},
		{"missing in --wpt-root", []string{"wpt", "--wpt-root", "testdata/wpt", "nope/"}, 1, "wdext: nope/: no such file or test (in --wpt-root testdata/wpt)\n"},
		{"bad --wpt-root", []string{"wpt", "--wpt-root", "/nonexistent/wpt"}, 1, "wdext: --wpt-root /nonexistent/wpt: no such file or directory\n"},
		{"outside --wpt-root", []string{"wpt", "--wpt-root", "testdata/wpt", repo + "/testdata/wpt-runner"}, 1, "not inside --wpt-root testdata/wpt\n"},
		{"two roots", []string{"wpt", "testdata/wpt", "testdata/wpt-runner"}, 1, "wdext: testdata/wpt and testdata/wpt-runner are in different WPT roots"},
		{"no path", []string{"wpt", "--report", "r.json"}, 2, "wdext wpt: no PATH: give a test directory or file"},
		{"bad flag after a path", []string{"wpt", "testdata/wpt", "--no-such-flag"}, 2, "flag provided but not defined: -no-such-flag\nusage: wdext wpt"},
		{"flag without value", []string{"wpt", "testdata/wpt", "--report"}, 2, "flag needs an argument: -report\nusage: wdext wpt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errOut, code := wdextIn(t, repo, nil, 30*time.Second, c.args...)
			assert.Equal(t, code, c.code, errOut)
			assert.Assert(t, strings.Contains(errOut, c.want), "want %q in:\n%s", c.want, errOut)
			if c.code == 1 {
				assert.Equal(t, strings.Count(errOut, "\n"), 1, "one line: %s", errOut)
			}
		})
	}
}

func TestParseInterleaved(t *testing.T) {
	for _, c := range []struct {
		args, paths []string
		report      string
		experiment  bool
	}{
		{[]string{"a", "--report", "r.json", "b"}, []string{"a", "b"}, "r.json", false},
		{[]string{"--enable-experimental", "a", "-report=r.json"}, []string{"a"}, "r.json", true},
		{[]string{"a", "--", "--report", "-x"}, []string{"a", "--report", "-x"}, "", false},
		{[]string{"--report", "-", "a", "--enable-experimental=false"}, []string{"a"}, "-", false},
		{[]string{"-", "a"}, []string{"-", "a"}, "", false},
	} {
		fs := flag.NewFlagSet("wpt", flag.ContinueOnError)
		var f wptFlags
		f.register(fs, registry.Kinds)
		paths := parseInterleaved(fs, c.args)
		assert.DeepEqual(t, paths, c.paths)
		assert.Equal(t, f.report, c.report, "%q", c.args)
		assert.Equal(t, f.experimental, c.experiment, "%q", c.args)
	}
}

// The root is found above the paths, so the IDs are the root's whatever
// part of the tree is run; several paths and single files work.
func TestSelectTests(t *testing.T) {
	repo := repoRoot(t)
	suite := filepath.Join(repo, "testdata", "wpt")
	urls := func(tests []wpt.Test) []string {
		var out []string
		for _, t := range tests {
			out = append(out, t.URL)
		}
		return out
	}
	root, tests, err := selectTests("", []string{"../../testdata/wpt/js-self-profiling/cross-frame.sub.html", "../../testdata/wpt/measure-memory"})
	assert.NilError(t, err)
	assert.Equal(t, root, suite)
	assert.DeepEqual(t, urls(tests), []string{"/js-self-profiling/cross-frame.sub.html",
		"/measure-memory/cross-origin-iframe.https.sub.html", "/measure-memory/iframe-and-worker.https.html", "/measure-memory/result-shape.https.html"})

	// --wpt-root: paths below it as WPT takes them, or file names inside it.
	root, tests, err = selectTests("../../testdata/wpt", []string{"/js-self-profiling/function-names.html", "../../testdata/wpt/measure-memory/result-shape.https.html", "js-self-profiling/function-names.html"})
	assert.NilError(t, err)
	assert.Equal(t, root, suite)
	assert.DeepEqual(t, urls(tests), []string{"/js-self-profiling/function-names.html", "/measure-memory/result-shape.https.html"})

	// A tree without marker: the directory given is the root, a file's
	// directory for a file.
	tree := t.TempDir()
	harness := `<script src="/resources/testharness.js"></script>`
	assert.NilError(t, os.MkdirAll(filepath.Join(tree, "sub"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(tree, "sub", "a.html"), []byte(harness), 0o644))
	root, tests, err = selectTests("", []string{tree})
	assert.NilError(t, err)
	assert.Equal(t, root, tree)
	assert.DeepEqual(t, urls(tests), []string{"/sub/a.html"})
	root, tests, err = selectTests("", []string{filepath.Join(tree, "sub", "a.html")})
	assert.NilError(t, err)
	assert.Equal(t, root, filepath.Join(tree, "sub"))
	assert.DeepEqual(t, urls(tests), []string{"/a.html"})
	// With the marker, a subdirectory keeps the root's IDs.
	assert.NilError(t, os.WriteFile(filepath.Join(tree, wpt.RootMarker), nil, 0o644))
	root, tests, err = selectTests("", []string{filepath.Join(tree, "sub")})
	assert.NilError(t, err)
	assert.Equal(t, root, tree)
	assert.DeepEqual(t, urls(tests), []string{"/sub/a.html"})
}

func TestSessionCapabilitiesExperimental(t *testing.T) {
	args := func(c selenium.Capabilities) []string {
		return c["goog:chromeOptions"].(map[string]any)["args"].([]string)
	}
	caps, product := sessionCapabilities(chromium.Kind, false, nil)
	assert.Equal(t, product, "chrome")
	assert.Check(t, !strings.Contains(strings.Join(args(caps), " "), "experimental"))
	caps, _ = sessionCapabilities(chromium.Kind, true, nil)
	assert.Check(t, is.Contains(args(caps), "--enable-experimental-web-platform-features"))
	assert.Check(t, is.Contains(args(caps), "--enable-blink-features=ForceEagerMeasureMemory"), "the defaults stay")
	_, product = sessionCapabilities(webkitgtk.Kind, false, nil)
	assert.Equal(t, product, "webkitgtk")
	assert.Check(t, serverOptions(chromium.Kind).SecondPort)
}

// A driver that starts but cannot make a session (Chromium that does not
// start) stops the run before any test, with one error; so does a driver
// that exits at once. Before, each test was a CRASH.
func TestWPTDriverCannotStart(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3 for the fake chromedriver")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "chromedriver")
	assert.NilError(t, os.WriteFile(fake, []byte(`#!`+py+`
import http.server, json, sys
port = int([a for a in sys.argv if a.startswith("--port=")][0].split("=")[1])
class H(http.server.BaseHTTPRequestHandler):
    def reply(self, code, value):
        body = json.dumps({"value": value}).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        self.reply(200, {"ready": True, "message": "fake"})
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.reply(500, {"error": "session not created", "message": "session not created: Chrome failed to start: exited normally.", "stacktrace": ""})
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
`), 0o755))
	exits := filepath.Join(dir, "exits")
	assert.NilError(t, os.WriteFile(exits, []byte("#!/bin/sh\necho 'cannot open display' >&2\nexit 1\n"), 0o755))
	requireHarness(t)
	repo := repoRoot(t)
	for _, c := range []struct {
		name, driver, want string
	}{
		{"no session", fake, "wdext: cannot create a WebDriver session: session not created: Chrome failed to start: exited normally.\n"},
		{"exits", exits, "wdext: chromedriver did not start: " + exits + " exited before it was ready; it printed:\ncannot open display\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := wdextIn(t, repo, nil, 60*time.Second, "wpt", "testdata/wpt", "--chromedriver", c.driver, "--log-level", "error")
			assert.Equal(t, code, 1, "%s\n%s", out, errOut)
			assert.Assert(t, strings.HasSuffix(errOut, c.want), "want %q at the end of:\n%s", c.want, errOut)
			assert.Check(t, !strings.Contains(out, "CRASH") && !strings.Contains(out, "[1/"), "tests ran:\n%s", out)
		})
	}
}

// `wdext setup` fills the per-user cache from the checkout's copy (the
// working directory is in one); an installed wdext outside the checkout
// finds testharness.js there, and without it says the command to run.
func TestSetupAndInstalledHarness(t *testing.T) {
	requireHarness(t)
	cache := t.TempDir()
	env := []string{"XDG_CACHE_HOME=" + cache, "HOME=" + t.TempDir()}
	elsewhere := t.TempDir() // outside the checkout, no .cache/ above it
	tree := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(tree, "a.html"), []byte(`<script src="/resources/testharness.js"></script>`), 0o644))

	_, errOut, code := wdextIn(t, elsewhere, env, 30*time.Second, "wpt", tree)
	assert.Equal(t, code, 1, errOut)
	assert.Assert(t, is.Contains(errOut, "run `wdext setup` once (fetches the npm package wpt-runner@7.0.0's testharness.js into "+
		filepath.Join(cache, "wdext", "wpt-runner-7.0.0", "testharness.js")+")"))

	out, errOut, code := wdextIn(t, repoRoot(t), env, 30*time.Second, "setup")
	assert.Equal(t, code, 0, errOut)
	want := filepath.Join(cache, "wdext", "wpt-runner-7.0.0", "testharness.js")
	assert.Equal(t, out, want+"\n")
	assert.Assert(t, is.Contains(errOut, "copying wpt-runner@7.0.0's testharness.js from "))
	b, err := os.ReadFile(want)
	assert.NilError(t, err)
	assert.Assert(t, bytes.Contains(b, []byte("testharness")))

	// Once is enough.
	_, errOut, code = wdextIn(t, elsewhere, env, 30*time.Second, "setup")
	assert.Equal(t, code, 0, errOut)
	assert.Assert(t, is.Contains(errOut, "already in"))
}

// Without a copy on the machine, setup fetches the package and checks it:
// a registry that answers something else is refused.
func TestSetupChecksWhatItFetches(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		w.Write([]byte("not a tarball"))
	}))
	defer reg.Close()
	env := []string{"XDG_CACHE_HOME=" + t.TempDir(), "HOME=" + t.TempDir()}
	_, errOut, code := wdextIn(t, t.TempDir(), env, 30*time.Second, "setup", "--registry", reg.URL+"/npm/")
	assert.Equal(t, code, 1, errOut)
	assert.Assert(t, is.Contains(errOut, "wdext: wpt-runner@7.0.0 from "+reg.URL+"/npm/wpt-runner/-/wpt-runner-7.0.0.tgz has integrity sha512-"), errOut)
	mu.Lock()
	assert.DeepEqual(t, asked, []string{"/npm/wpt-runner/-/wpt-runner-7.0.0.tgz"})
	mu.Unlock()
	// $npm_config_registry is the default registry, as for npm.
	_, errOut, code = wdextIn(t, t.TempDir(), append(env, "npm_config_registry="+reg.URL+"/other"), 30*time.Second, "setup")
	assert.Equal(t, code, 1, errOut)
	assert.Assert(t, is.Contains(errOut, reg.URL+"/other/wpt-runner/-/wpt-runner-7.0.0.tgz has integrity"), errOut)
}

// The real registry, when it can be reached (the npm registry is what
// `wdext setup` uses on a machine without a checkout).
func TestSetupFromNPMRegistry(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no network")
	}
	resp, err := http.Head(wpt.DefaultRegistry + "wpt-runner")
	if err != nil {
		t.Skipf("npm registry unreachable: %v", err)
	}
	resp.Body.Close()
	cache := t.TempDir()
	env := []string{"XDG_CACHE_HOME=" + cache, "HOME=" + t.TempDir()}
	out, errOut, code := wdextIn(t, t.TempDir(), env, 120*time.Second, "setup")
	assert.Equal(t, code, 0, errOut)
	assert.Assert(t, is.Contains(errOut, "fetching https://registry.npmjs.org/wpt-runner/-/wpt-runner-7.0.0.tgz"))
	assert.Equal(t, out, filepath.Join(cache, "wdext", "wpt-runner-7.0.0", "testharness.js")+"\n")
}

// The bundled suite as a user types it: flags after the path, its
// expectations picked up by themselves (exit 0 on Chromium), a
// wptreport with wptrunner's run_info; then a file and a subdirectory in
// one run keep the root's test IDs (the cross-frame test needs the root's
// resources to pass).
func TestWPTBundledSuiteCommandLine(t *testing.T) {
	chromiumtest.Require(t)
	requireHarness(t)
	repo := repoRoot(t)
	out := t.TempDir()
	report, junit := filepath.Join(out, "wptreport.json"), filepath.Join(out, "junit.xml")
	stdout, errOut, code := wdextIn(t, repo, nil, 5*time.Minute, "wpt", "testdata/wpt", "--report", report, "--junit", junit)
	assert.Equal(t, code, 0, "%s\n%s", stdout, errOut)
	assert.Assert(t, is.Contains(stdout, "expectations: "+filepath.Join(repo, "testdata", "wpt", "expectations.json")))
	assert.Assert(t, is.Contains(stdout, "All results were as expected."))
	rep, b := readReport(t, report)
	assert.Assert(t, len(rep.Results) >= 9, "%s", b)
	info := rep.RunInfo
	t.Logf("run_info: %v", info)
	assert.Equal(t, info["product"], "chrome")
	assert.Assert(t, regexp.MustCompile(`^\d+\.\d+\.\d+\.\d+$`).MatchString(fmt.Sprint(info["browser_version"])), "browser_version %v", info["browser_version"])
	assert.Equal(t, info["os"], "linux")
	assert.Assert(t, fmt.Sprint(info["os_version"]) != "", "os_version")
	assert.Assert(t, strings.Contains(fmt.Sprint(info["wdext"]), "go1."), "wdext %v", info["wdext"])
	assert.Equal(t, info["enable_experimental"], false)
	assert.Equal(t, info["timeout_multiplier"], 1.0)
	assert.Equal(t, info["engine"], "chromium")
	_, err := os.Stat(junit)
	assert.NilError(t, err)

	stdout, errOut, code = wdextIn(t, repo, nil, 5*time.Minute, "wpt",
		"testdata/wpt/js-self-profiling/cross-frame.sub.html", "--report", report, "testdata/wpt/measure-memory")
	assert.Equal(t, code, 0, "%s\n%s", stdout, errOut)
	rep, _ = readReport(t, report)
	got := map[string]string{}
	for _, r := range rep.Results {
		got[r.Test] = r.Status
	}
	assert.DeepEqual(t, got, map[string]string{
		"/js-self-profiling/cross-frame.sub.html":            "OK",
		"/measure-memory/cross-origin-iframe.https.sub.html": "OK",
		"/measure-memory/iframe-and-worker.https.html":       "OK",
		"/measure-memory/result-shape.https.html":            "OK",
	})
}

// Ctrl-C while a test hangs: the summary and the reports of the tests
// that finished are written, the exit status is 130, and the browser is
// gone. The run is of an installed wdext's kind: outside the checkout,
// with testharness.js from `wdext setup`'s cache.
func TestWPTInterruptWritesReport(t *testing.T) {
	chromiumtest.Require(t)
	requireHarness(t)
	cache := t.TempDir()
	env := []string{"XDG_CACHE_HOME=" + cache}
	_, errOut, code := wdextIn(t, repoRoot(t), env, 30*time.Second, "setup")
	assert.Equal(t, code, 0, errOut)

	tree := t.TempDir()
	harness := "<!doctype html>\n<script src=/resources/testharness.js></script>\n<script src=/resources/testharnessreport.js></script>\n"
	assert.NilError(t, os.WriteFile(filepath.Join(tree, "a-passes.html"), []byte(harness+`<script>test(() => {}, "passes");</script>`), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(tree, "b-waits.html"), []byte("<meta name=timeout content=long>\n"+harness+
		`<script>promise_test(() => new Promise(() => {}), "waits for ever");</script>`), 0o644))
	out := t.TempDir()
	report, junit := filepath.Join(out, "r.json"), filepath.Join(out, "j.xml")

	mark := fmt.Sprintf("WDEXT_TEST_MARK=%s-%d-%d", t.Name(), os.Getpid(), time.Now().UnixNano())
	cmd := exec.Command(wdextBinary(t), "wpt", tree, "--report", report, "--junit", junit)
	cmd.Dir = t.TempDir()
	cmd.Env = append(append(os.Environ(), env...), mark)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	assert.NilError(t, err)
	assert.NilError(t, cmd.Start())
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for pid := range e2e.MarkedProcesses(mark) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	var stdout bytes.Buffer
	first := make(chan struct{})
	copied := make(chan struct{})
	go func() { // owned by the test: ends when wdext closes its stdout
		defer close(copied)
		sc := bufio.NewScanner(pipe)
		once := sync.Once{}
		for sc.Scan() {
			stdout.WriteString(sc.Text() + "\n")
			if strings.HasPrefix(sc.Text(), "[1/2] ") {
				once.Do(func() { close(first) })
			}
		}
	}()
	select {
	case <-first:
	case <-copied:
		t.Fatalf("wdext ended before the first test finished:\n%s", stderr.String())
	case <-time.After(3 * time.Minute):
		t.Fatalf("no first result in 3 minutes:\n%s", stderr.String())
	}
	// The second test is under way (it waits 60 s), or about to be:
	// interrupt it.
	assert.NilError(t, cmd.Process.Signal(syscall.SIGINT))
	waited := make(chan error, 1)
	go func() { <-copied; waited <- cmd.Wait() }() // owned by the test: ends when wdext exits (or is killed at cleanup)
	var werr error
	select {
	case werr = <-waited:
	case <-time.After(2 * time.Minute):
		t.Fatalf("wdext still running 2 minutes after SIGINT:\n%s", stderr.String())
	}
	var exit *exec.ExitError
	assert.Assert(t, errors.As(werr, &exit), "%v", werr)
	assert.Equal(t, exit.ExitCode(), 130, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Assert(t, is.Contains(stdout.String(), "Interrupted (interrupt): 1 of 2 tests finished"))
	assert.Assert(t, is.Contains(stdout.String(), "Ran 1 tests (1 subtests)"))
	rep, b := readReport(t, report)
	assert.Equal(t, len(rep.Results), 1, "%s", b)
	assert.Equal(t, rep.Results[0].Test, "/a-passes.html")
	assert.Equal(t, rep.Results[0].Status, "OK")
	assert.Equal(t, rep.RunInfo["testharness"], wpt.HarnessPackage)
	j, err := os.ReadFile(junit)
	assert.NilError(t, err)
	assert.Assert(t, is.Contains(string(j), `name="/a-passes.html"`))
	// Nothing it started is left.
	deadline := time.Now().Add(30 * time.Second)
	for len(e2e.MarkedProcesses(mark)) > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	assert.Equal(t, len(e2e.MarkedProcesses(mark)), 0, "left behind: %v", e2e.MarkedProcesses(mark))
}

// lockedBuffer is a bytes.Buffer a process writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Document-Policy decides whether a document may profile, from its first
// script on, over https as over http, and a Profiler takes periodic
// samples while a test spins (as WPT's profile-utils.js does), in a
// cross-origin isolated document too: natively on Chromium, and on
// WebKitGTK, whose Profiler is wdext's polyfill, because wdext wpt puts
// the polyfill and each document's policy in the document
// (wpt.Options.Document, webkitgtk.InjectProfiler).
func TestWPTDocumentPolicy(t *testing.T) {
	requireHarness(t)
	engines := map[string]func(testing.TB) string{"chromium": chromiumtest.Require, "webkitgtk": webkitgtktest.Require}
	for _, name := range []string{"chromium", "webkitgtk"} {
		t.Run(name, func(t *testing.T) {
			engines[name](t)
			stdout, errOut, code := wdextIn(t, repoRoot(t), nil, 3*time.Minute, "wpt", "--engine", name, "testdata/wpt-policy")
			assert.Equal(t, code, 0, "%s\n%s", stdout, errOut)
			assert.Check(t, is.Contains(stdout, "subtests: PASS 5"), stdout)
		})
	}
}
