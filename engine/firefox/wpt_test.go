package firefox_test

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/firefox"
	"github.com/wdext/wdext/engine/kind"
)

// A Firefox session of a WPT run resolves the served host names
// (network.dns.localDomains, as wptrunner sets it) and accepts the
// server's certificate.
func TestWPTCapabilities(t *testing.T) {
	assert.DeepEqual(t, firefox.WPTCapabilities(kind.Served{}), map[string]any{"browserName": "firefox"})
	got := firefox.WPTCapabilities(kind.Served{Hosts: true, HostNames: []string{"web-platform.test", "www1.web-platform.test"}, SPKIHash: "x"})
	assert.DeepEqual(t, got, map[string]any{
		"browserName":         "firefox",
		"acceptInsecureCerts": true,
		"moz:firefoxOptions":  map[string]any{"prefs": map[string]any{"network.dns.localDomains": "web-platform.test,www1.web-platform.test"}},
	})
}
