package chromium_test

import (
	"testing"

	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/engine/kind"
	"github.com/wdext/wdext/wpt"
	"gotest.tools/v3/assert"
)

// served is what the capabilities depend on of s.
func served(s *wpt.Server) kind.Served {
	return kind.Served{Hosts: s.WPTHosts(), SPKIHash: s.SPKIHash()}
}

func TestWPTCapabilities(t *testing.T) {
	args := func(caps map[string]any) []string {
		return caps["goog:chromeOptions"].(map[string]any)["args"].([]string)
	}
	assert.DeepEqual(t, args(chromium.WPTCapabilities(kind.Served{})), []string{"--enable-blink-features=ForceEagerMeasureMemory"})
	assert.DeepEqual(t, args(chromium.WPTCapabilities(kind.Served{Experimental: true})),
		[]string{"--enable-blink-features=ForceEagerMeasureMemory", "--enable-experimental-web-platform-features"})

	root := t.TempDir()
	s, err := wpt.NewServer(root, wpt.Options{WPTHosts: true, HTTPS: true})
	assert.NilError(t, err)
	got := args(chromium.WPTCapabilities(served(s)))
	assert.DeepEqual(t, got, []string{
		"--enable-blink-features=ForceEagerMeasureMemory",
		"--host-resolver-rules=MAP nonexistent.*.test ~NOTFOUND, MAP *.test. 127.0.0.1, MAP *.test 127.0.0.1",
		"--ignore-certificate-errors-spki-list=" + s.SPKIHash(),
	})
	s, err = wpt.NewServer(root, wpt.Options{MainHost: "localhost"})
	assert.NilError(t, err)
	assert.DeepEqual(t, args(chromium.WPTCapabilities(served(s))), []string{"--enable-blink-features=ForceEagerMeasureMemory"})
}
