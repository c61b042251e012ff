package main

import (
	"strings"
	"syscall"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/internal/e2e"
)

// The client helpers of clients/ (Python: clients/python/wdext.py, Node.js:
// clients/js/wdext.mjs with selenium-webdriver and WebdriverIO), each
// driven by its own test script against a real `wdext serve` in front of
// Chromium. A script prints a line per check and "N passed, N failed";
// it exits non-zero on a failure.

// readmePage serves testdata/readme (the README's example page) and
// returns app.html's URL.
func readmePage(t *testing.T) string {
	return e2e.ServePages(t, e2e.Testdata("readme"), nil).B + "/app.html"
}

func TestClientPython(t *testing.T) {
	chromiumtest.Require(t)
	e2e.RequireTool(t, "/usr/bin/python3 with selenium", "/usr/bin/python3", "-c", "import selenium")
	s := startServe(t)
	e2e.RunScript(t, nil, "/usr/bin/python3", "clients/python/test_wdext.py", s.url, readmePage(t))
	s.signalAndWait(t, syscall.SIGTERM)
	assert.Assert(t, strings.Contains(s.log(), `msg="shutting down" sessions=0`), "the script left sessions open:\n%s", s.log())
}

func TestClientJS(t *testing.T) {
	chromiumtest.Require(t)
	nm := e2e.RequireNodeClients(t)
	s := startServe(t)
	e2e.RunScript(t, []string{"WDEXT_NODE_MODULES=" + nm}, "node", "clients/js/test.mjs", s.url, readmePage(t))
	s.signalAndWait(t, syscall.SIGTERM)
	assert.Assert(t, strings.Contains(s.log(), `msg="shutting down" sessions=0`), "the script left sessions open:\n%s", s.log())
}
