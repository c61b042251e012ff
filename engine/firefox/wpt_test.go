package firefox_test

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/firefox"
	"github.com/wdext/wdext/engine/kind"
	"github.com/wdext/wdext/wpt"
)

// A Firefox session of a WPT run resolves WPT's host names but the
// nonexistent ones (network.dns.localDomains, as wptrunner sets it) and
// accepts the server's certificate.
func TestWPTCapabilities(t *testing.T) {
	assert.DeepEqual(t, firefox.WPTCapabilities(kind.Served{}), map[string]any{"browserName": "firefox"})

	s, err := wpt.NewServer(t.TempDir(), wpt.Options{WPTHosts: true, HTTPS: true})
	assert.NilError(t, err)
	got := firefox.WPTCapabilities(kind.Served{Hosts: s.WPTHosts(), HostNames: s.HostNames(), SPKIHash: s.SPKIHash()})
	assert.DeepEqual(t, got, map[string]any{
		"browserName":         "firefox",
		"acceptInsecureCerts": true,
		"moz:firefoxOptions": map[string]any{"prefs": map[string]any{"network.dns.localDomains": "not-web-platform.test," +
			"web-platform.test," +
			"www.not-web-platform.test,www.web-platform.test," +
			"www1.not-web-platform.test,www1.web-platform.test," +
			"www2.not-web-platform.test,www2.web-platform.test," +
			"xn--lve-6lad.not-web-platform.test,xn--lve-6lad.web-platform.test," +
			"xn--n8j6ds53lwwkrqhv28a.not-web-platform.test,xn--n8j6ds53lwwkrqhv28a.web-platform.test"}},
	})
}
