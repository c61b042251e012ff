package e2e

import (
	"os"
	"testing"

	"github.com/tebeka/selenium"

	"github.com/wdext/wdext/engine/webkitgtk"
	"github.com/wdext/wdext/polyfill"
	"github.com/wdext/wdext/webdriver"
)

// RequireWebKitGTK skips the test when WebKitWebDriver or Xvfb is
// missing, unless WDEXT_REQUIRE_BROWSER is set (CI), where it fails.
func RequireWebKitGTK(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short runs no browser (the unit tests, as make check-race runs them)")
	}
	path, err := webkitgtk.Find(os.Getenv("WDEXT_WEBKITWEBDRIVER"))
	if err == nil {
		_, err = os.Stat(path)
	}
	if err == nil {
		_, err = webkitgtk.FindXvfb()
	}
	if err != nil {
		if os.Getenv("WDEXT_REQUIRE_BROWSER") != "" {
			t.Fatalf("WebKitWebDriver/Xvfb required: %v", err)
		}
		t.Skipf("needs WebKitWebDriver and Xvfb: %v", err)
	}
	return path
}

// WebKitEnv is a wdext server in front of WebKitGTK drivers it manages.
type WebKitEnv struct {
	URL      string
	Server   *webdriver.Server
	Upstream *webkitgtk.Upstream
}

// StartWebKitGTK runs wdext, with webkitgtk's commands and the
// extensions given, in front of a webkitgtk.Upstream that injects the
// Profiler polyfill into every document; everything stops when the test
// ends.
func StartWebKitGTK(t testing.TB, extensions ...func(*webdriver.Server)) *WebKitEnv {
	t.Helper()
	path := RequireWebKitGTK(t)
	up := &webkitgtk.Upstream{Driver: path, Inject: polyfill.Script("Profiler")}
	srv, url := serve(t, up, nil, append([]func(*webdriver.Server){webkitgtk.Register}, extensions...))
	return &WebKitEnv{URL: url, Server: srv, Upstream: up}
}

// WebKitCapabilities are what WebKitWebDriver accepts by default.
func WebKitCapabilities() selenium.Capabilities { return selenium.Capabilities{} }
