package chromium

import "github.com/wdext/wdext/engine/kind"

// HostResolverRules is what wptrunner passes Chromium so that WPT's host
// names reach the local server without /etc/hosts: every .test name is
// 127.0.0.1, but the nonexistent ones fail as a missing host would.
const HostResolverRules = "MAP nonexistent.*.test ~NOTFOUND, MAP *.test. 127.0.0.1, MAP *.test 127.0.0.1"

// WPTCapabilities are what a Chrome session needs to run tests served as
// s says:
//
//   - --enable-blink-features=ForceEagerMeasureMemory, always, so that
//     measureUserAgentSpecificMemory() answers at once rather than at the
//     next scheduled GC 10–20 s later;
//   - with s.Hosts, --host-resolver-rules mapping WPT's host names to
//     127.0.0.1 (HostResolverRules, as wptrunner does);
//   - with s.SPKIHash, --ignore-certificate-errors-spki-list with it, so
//     that the server's certificate is accepted;
//   - with s.Experimental, --enable-experimental-web-platform-features,
//     as wptrunner's --enable-experimental.
//
// The certificate is trusted through the SPKI list and not
// acceptInsecureCerts, as wptrunner does for Chrome: chromedriver's
// acceptInsecureCerts covers the documents of the session, but not
// dedicated, shared and service workers, whose fetches (importScripts,
// module workers, fetch() from a worker) a TLS-served test makes too; and
// the list accepts this run's one throw-away key instead of every invalid
// certificate. Chromium honours the switch only with a --user-data-dir,
// which chromedriver always passes.
func WPTCapabilities(s kind.Served) map[string]any {
	args := []string{"--enable-blink-features=ForceEagerMeasureMemory"}
	if s.Hosts {
		args = append(args, "--host-resolver-rules="+HostResolverRules)
	}
	if s.SPKIHash != "" {
		args = append(args, "--ignore-certificate-errors-spki-list="+s.SPKIHash)
	}
	if s.Experimental {
		args = append(args, "--enable-experimental-web-platform-features")
	}
	return map[string]any{
		"browserName":        "chrome",
		"goog:chromeOptions": map[string]any{"args": args},
	}
}
