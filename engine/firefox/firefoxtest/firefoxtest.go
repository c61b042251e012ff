// Package firefoxtest is what end-to-end tests against real Firefox
// share: finding the browser, or skipping without it, and a wdext server
// in front of the Firefox it manages, stopped when the test ends.
package firefoxtest

import (
	"os"
	"testing"

	"github.com/wdext/wdext/engine/firefox"
	"github.com/wdext/wdext/engine/kind"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/webdriver"
)

// Require skips the test when Firefox is missing (see e2e.Require) and
// returns its path ($WDEXT_FIREFOX, else firefox.Find's).
func Require(t testing.TB) string {
	t.Helper()
	bin, err := firefox.Find(os.Getenv("WDEXT_FIREFOX"))
	if err == nil {
		_, err = os.Stat(bin)
	}
	e2e.Require(t, "firefox-esr", err)
	return bin
}

// Env is a wdext server in front of the Firefox browsers it manages.
type Env struct {
	URL      string
	Server   *webdriver.Server
	Upstream *firefox.Upstream
}

// Start runs wdext, with firefox's commands and the extensions given, in
// front of a firefox.Upstream; everything stops when the test ends.
func Start(t testing.TB, extensions ...func(*webdriver.Server)) *Env {
	t.Helper()
	up := &firefox.Upstream{Binary: Require(t)}
	srv, url := e2e.Serve(t, kind.Managed{Upstream: up}, firefox.Kind.Commands, extensions...)
	return &Env{URL: url, Server: srv, Upstream: up}
}
