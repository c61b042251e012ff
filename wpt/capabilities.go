package wpt

import (
	"github.com/tebeka/selenium"
)

// ChromeHostResolverRules is what wptrunner passes Chromium so that WPT's
// host names reach the local server without /etc/hosts: every .test name
// is 127.0.0.1, but the nonexistent ones fail as a missing host would.
const ChromeHostResolverRules = "MAP nonexistent.*.test ~NOTFOUND, MAP *.test. 127.0.0.1, MAP *.test 127.0.0.1"

// ChromeCapabilities are what a Chrome session needs to run tests
// served by srv (which may be nil):
//
//   - --enable-blink-features=ForceEagerMeasureMemory, always, so that
//     measureUserAgentSpecificMemory() answers at once rather than at the
//     next scheduled GC 10–20 s later;
//   - with srv.WPTHosts(), --host-resolver-rules mapping WPT's host names to
//     127.0.0.1 (ChromeHostResolverRules, as wptrunner does);
//   - with Options.HTTPS, --ignore-certificate-errors-spki-list with the
//     server's key (SPKIHash), so its certificate is accepted;
//   - with experimental, --enable-experimental-web-platform-features, as
//     wptrunner's --enable-experimental.
//
// The certificate is trusted through the SPKI list and not
// acceptInsecureCerts, as wptrunner does for Chrome: chromedriver's
// acceptInsecureCerts covers the documents of the session, but not
// dedicated, shared and service workers, whose fetches (importScripts,
// module workers, fetch() from a worker) a TLS-served test makes too; and
// the list accepts this run's one throw-away key instead of every invalid
// certificate. Chromium honours the switch only with a --user-data-dir,
// which chromedriver always passes.
func ChromeCapabilities(srv *Server, experimental bool) selenium.Capabilities {
	args := []string{"--enable-blink-features=ForceEagerMeasureMemory"}
	if srv != nil && srv.WPTHosts() {
		args = append(args, "--host-resolver-rules="+ChromeHostResolverRules)
	}
	if srv != nil && srv.SPKIHash() != "" {
		args = append(args, "--ignore-certificate-errors-spki-list="+srv.SPKIHash())
	}
	if experimental {
		args = append(args, "--enable-experimental-web-platform-features")
	}
	return selenium.Capabilities{
		"browserName":        "chrome",
		"goog:chromeOptions": map[string]any{"args": args},
	}
}

// WebKitGTKCapabilities are what a WebKitGTK session needs to run tests
// served by srv (which may be nil): with Options.HTTPS, acceptInsecureCerts,
// which WebKitGTK applies to the session's whole network, workers included
// (its alternative, webkitgtk:browserOptions certificates, takes a
// certificate file per host name).
//
// WebKitGTK cannot be told to resolve WPT's host names, so it needs the
// loopback mode (no Options.WPTHosts) unless the machine's /etc/hosts maps
// them, as wptrunner asks of WebKitGTK users. A proxy does not get around
// it (measured with WebKitWebDriver 2.50): its proxy capability's sslProxy
// is reached over TLS and the proxy's certificate checked against the
// system's CAs whatever acceptInsecureCerts says, https requests do not go
// through an httpProxy, and a socksProxy is never used.
func WebKitGTKCapabilities(srv *Server) selenium.Capabilities {
	caps := selenium.Capabilities{}
	if srv != nil && srv.SPKIHash() != "" {
		caps["acceptInsecureCerts"] = true
	}
	return caps
}
