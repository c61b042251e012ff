package main

import (
	"strings"
	"syscall"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/internal/e2e"
)

// Real clients drive the classic commands (and BiDi) through wdext serve
// on Chromium and on Firefox alike: Python Selenium 4.8,
// selenium-webdriver, and WebdriverIO classic and BiDi
// (testdata/classic's scripts).
func TestClassicClients(t *testing.T) {
	for _, c := range []struct{ engine, browser string }{{"chromium", "chrome"}, {"firefox", "firefox"}} {
		t.Run(c.engine, func(t *testing.T) {
			if c.engine == "firefox" {
				requireFirefox(t)
			} else {
				chromiumtest.Require(t)
			}
			requireTool(t, "/usr/bin/python3 with selenium", "/usr/bin/python3", "-c", "import selenium")
			nm := requireNodeClients(t)
			page := e2e.ServePages(t, e2e.Testdata("classic"), nil).A + "/page.html"
			s := startServe(t, "--engine", c.engine)
			runClientScript(t, nil, "/usr/bin/python3", "testdata/classic/classic.py", s.url, c.browser, page)
			runClientScript(t, []string{"WDEXT_NODE_MODULES=" + nm}, "node", "testdata/classic/classic.mjs", s.url, c.browser, page)
			s.signalAndWait(t, syscall.SIGTERM)
			assert.Assert(t, strings.Contains(s.log(), `msg="shutting down" sessions=0`), "the scripts left sessions open:\n%s", s.log())
		})
	}
}
