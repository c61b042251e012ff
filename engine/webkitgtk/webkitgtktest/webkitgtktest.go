// Package webkitgtktest starts what end-to-end tests need against real
// WebKitGTK: a wdext server in front of WebKitWebDriver drivers it
// manages, stopped (browsers and display included) when the test ends.
package webkitgtktest

import (
	"os"
	"testing"

	"github.com/tebeka/selenium"

	"github.com/wdext/wdext/engine/kind"
	"github.com/wdext/wdext/engine/webkitgtk"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/polyfill"
	"github.com/wdext/wdext/webdriver"
)

// Require skips the test when WebKitWebDriver or Xvfb is missing (see
// e2e.Require) and returns WebKitWebDriver's path
// ($WDEXT_WEBKITWEBDRIVER, else found).
func Require(t testing.TB) string {
	t.Helper()
	path, err := webkitgtk.Find(os.Getenv("WDEXT_WEBKITWEBDRIVER"))
	if err == nil {
		_, err = os.Stat(path)
	}
	if err == nil {
		_, err = webkitgtk.FindXvfb()
	}
	e2e.Require(t, "WebKitWebDriver and Xvfb", err)
	return path
}

// Env is a wdext server in front of WebKitGTK drivers it manages.
type Env struct {
	URL      string
	Server   *webdriver.Server
	Upstream *webkitgtk.Upstream
}

// Start runs wdext, with webkitgtk's commands and the extensions given,
// in front of a webkitgtk.Upstream that injects the Profiler polyfill
// into every document; everything stops when the test ends.
func Start(t testing.TB, extensions ...func(*webdriver.Server)) *Env {
	t.Helper()
	up := &webkitgtk.Upstream{Driver: Require(t), Inject: polyfill.Script("Profiler")}
	srv, url := e2e.Serve(t, kind.Managed{Upstream: up}, webkitgtk.Kind.Commands, extensions...)
	return &Env{URL: url, Server: srv, Upstream: up}
}

// Capabilities are what WebKitWebDriver accepts by default.
func Capabilities() selenium.Capabilities { return selenium.Capabilities{} }
