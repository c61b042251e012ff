package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/internal/e2e"
)

// The client helpers of clients/ (Python: clients/python/wdext.py, Node.js:
// clients/js/wdext.mjs with selenium-webdriver and WebdriverIO), each
// driven by its own test script against a real `wdext serve` in front of
// Chromium. A script prints a line per check and "N passed, N failed";
// it exits non-zero on a failure.

// requireNodeClients skips (fails under WDEXT_REQUIRE_BROWSER) when node or
// the Node.js clients scripts/deps.sh installs in .cache/node are missing,
// and returns that node_modules directory.
func requireNodeClients(t *testing.T) string {
	t.Helper()
	requireTool(t, "node")
	nm, err := filepath.Abs("../../.cache/node/node_modules")
	assert.NilError(t, err)
	for _, pkg := range []string{"selenium-webdriver", "webdriverio"} {
		if _, err := os.Stat(filepath.Join(nm, pkg, "package.json")); err != nil {
			if os.Getenv("WDEXT_REQUIRE_BROWSER") != "" {
				t.Fatalf("the Node.js client helper tests need %s in .cache/node (scripts/deps.sh installs it): %v", pkg, err)
			}
			t.Skipf("the Node.js client helper tests need %s in .cache/node (scripts/deps.sh installs it): %v", pkg, err)
		}
	}
	return nm
}

// runClientScript runs a client test script (argv) from the repository's
// root, in a process group of its own that is killed when it is done, and
// fails the test, with its output, unless it exits 0.
func runClientScript(t *testing.T, env []string, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever it left
	}
	assert.NilError(t, err, "%s:\n%s", strings.Join(argv, " "), out)
	assert.Assert(t, strings.Contains(string(out), " passed, 0 failed"), "%s", out)
	t.Logf("%s", out)
	return string(out)
}

// readmePage serves testdata/readme (the README's example page) and
// returns app.html's URL.
func readmePage(t *testing.T) string {
	return e2e.ServePages(t, e2e.Testdata("readme"), nil).B + "/app.html"
}

func TestClientPython(t *testing.T) {
	chromiumtest.Require(t)
	requireTool(t, "/usr/bin/python3 with selenium", "/usr/bin/python3", "-c", "import selenium")
	s := startServe(t)
	runClientScript(t, nil, "/usr/bin/python3", "clients/python/test_wdext.py", s.url, readmePage(t))
	s.signalAndWait(t, syscall.SIGTERM)
	assert.Assert(t, strings.Contains(s.log(), `msg="shutting down" sessions=0`), "the script left sessions open:\n%s", s.log())
}

func TestClientJS(t *testing.T) {
	chromiumtest.Require(t)
	nm := requireNodeClients(t)
	s := startServe(t)
	runClientScript(t, []string{"WDEXT_NODE_MODULES=" + nm}, "node", "clients/js/test.mjs", s.url, readmePage(t))
	s.signalAndWait(t, syscall.SIGTERM)
	assert.Assert(t, strings.Contains(s.log(), `msg="shutting down" sessions=0`), "the script left sessions open:\n%s", s.log())
}
