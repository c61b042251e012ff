// Package chromiumtest starts what end-to-end tests need against real
// Chromium: a wdext server in front of a chromedriver it manages, stopped
// (browsers included) when the test ends.
package chromiumtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tebeka/selenium"

	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/engine/kind"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/internal/procgroup"
	"github.com/wdext/wdext/webdriver"
)

// Env is a wdext server in front of a chromedriver it manages.
type Env struct {
	URL    string // wdext's base URL
	Server *webdriver.Server
	Driver *chromium.Driver
}

// Require skips the test when Chromium or chromedriver is missing (see
// e2e.Require) and returns chromedriver's path ($WDEXT_CHROMEDRIVER, else
// found).
func Require(t testing.TB) string {
	t.Helper()
	path, err := chromium.FindDriver(os.Getenv("WDEXT_CHROMEDRIVER"))
	if err == nil {
		_, err = exec.LookPath(path)
	}
	if err == nil && chromium.ManagedDefaults().Binary == "" {
		err = exec.ErrNotFound
	}
	e2e.Require(t, "chromium and chromedriver", err)
	return path
}

// Start runs wdext, with the extensions given (e.g. forcesample.Register),
// in front of a managed chromedriver; everything stops when the test ends.
func Start(t testing.TB, extensions ...func(*webdriver.Server)) *Env {
	t.Helper()
	d := &chromium.Driver{Path: Require(t), Bind: chromium.Bind}
	m := kind.Managed{Upstream: d, Defaults: chromium.ManagedDefaults()}
	srv, url := e2e.Serve(t, m, chromium.Kind.Commands, extensions...)
	return &Env{URL: url, Server: srv, Driver: d}
}

// Capabilities are what the e2e tests ask for: Chrome, nothing else (wdext
// adds the machine's defaults).
func Capabilities() selenium.Capabilities {
	return selenium.Capabilities{"browserName": "chrome"}
}

// Processes counts chromium and chromedriver processes on the
// machine (for the no-orphans checks).
func Processes() int {
	n := 0
	for _, p := range procgroup.Scan() {
		if !p.Exited() && (p.Comm == "chromedriver" || strings.HasPrefix(p.Comm, "chrom")) {
			n++
		}
	}
	return n
}
