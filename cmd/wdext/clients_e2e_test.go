package main

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/wire"
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

// TestClientPytest runs testdata/pytest with the pytest plugin
// (clients/python/pytest_wdext.py) against a real `wdext serve`: each
// test case's outcome and the verdict its junit XML carries.
func TestClientPytest(t *testing.T) {
	chromiumtest.Require(t)
	e2e.RequireTool(t, "/usr/bin/python3 with selenium and pytest", "/usr/bin/python3", "-c", "import selenium, pytest")
	s := startServe(t)
	page := e2e.ServePages(t, e2e.Testdata(), nil).A + "/leaks/driver.html"
	junit := filepath.Join(t.TempDir(), "junit.xml")
	out, err := e2e.Run([]string{"WDEXT_URL=" + s.url, "WDEXT_PAGE=" + page, "PYTHONPATH=clients/python"},
		"/usr/bin/python3", "-m", "pytest", "-p", "no:cacheprovider", "-q", "testdata/pytest", "--junitxml", junit)
	t.Logf("%s", out)
	// The bad markers' tests fail at setup, before a session, so pytest exits 1.
	var exit *exec.ExitError
	assert.Assert(t, errors.As(err, &exit) && exit.ExitCode() == 1, "pytest: %v", err)
	cases := junitCases(t, junit)
	assert.DeepEqual(t, cases, map[string]string{
		"test_marked_render_does_not_leak": "passed",
		"test_marked_leak_fails":           "skipped", // junit's word for an xfail
		"test_fixture":                     "passed",
		"test_bad_marker":                  `error: failed on setup with "@pytest.mark.leak_check has no option 'repeat' (it takes iterations and warmup)"`,
		"test_bad_iterations":              `error: failed on setup with "@pytest.mark.leak_check needs iterations >= 1 and warmup >= 0, not 0 and 1"`,
	})
	s.signalAndWait(t, syscall.SIGTERM)
	assert.Assert(t, strings.Contains(s.log(), `msg="shutting down" sessions=0`), "the tests left sessions open:\n%s", s.log())
}

// junitCases reads pytest's junit XML: each test case's outcome, and
// checks the verdicts the plugin kept as properties.
func junitCases(t *testing.T, path string) map[string]string {
	t.Helper()
	var suites struct {
		Cases []struct {
			Name       string `xml:"name,attr"`
			Properties []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testsuite>testcase"`
	}
	b, err := os.ReadFile(path)
	assert.NilError(t, err)
	assert.NilError(t, xml.Unmarshal(b, &suites))
	got := map[string]string{}
	for _, c := range suites.Cases {
		switch {
		case c.Failure != nil:
			got[c.Name] = "failure: " + c.Failure.Message
		case c.Error != nil:
			got[c.Name] = "error: " + c.Error.Message
		case c.Skipped != nil:
			got[c.Name] = "skipped"
		default:
			got[c.Name] = "passed"
		}
		if strings.HasPrefix(c.Name, "test_marked_") {
			assert.Equal(t, len(c.Properties), 1, "%s: the verdict is not in the junit XML", c.Name)
		}
		for _, p := range c.Properties {
			assert.Equal(t, p.Name, "wdext_leaks")
			var r wire.LeakReport
			assert.NilError(t, json.Unmarshal([]byte(p.Value), &r), p.Value)
			want := map[string]int{"test_marked_render_does_not_leak": 0, "test_marked_leak_fails": 1}[c.Name]
			assert.Equal(t, len(r.Leaks), want, "%s: %+v", c.Name, r.Leaks)
		}
	}
	return got
}
