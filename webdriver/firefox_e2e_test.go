package webdriver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/engine/firefox/firefoxtest"
	"github.com/wdext/wdext/internal/e2e"
)

// The conformance command sequence through wdext --engine firefox gets
// chromedriver's statuses and error codes at every step, and its values
// but where the browsers differ (firefoxDiffers). Messages are the
// browsers' own. There is no geckodriver here to compare against: Firefox
// is compared with the chromedriver that fronts Chromium.
func TestConformanceFirefox(t *testing.T) {
	path := chromiumtest.Require(t)
	firefoxtest.Require(t)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	page := pages.A + "/webdriver/conformance.html"

	want := chromedriverSequence(t, path, page)

	env := firefoxtest.Start(t)
	body := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{"browserName": "firefox"}}}
	got := conformanceSequence(t, newWire(t, env.URL, true), body, page)
	assert.Equal(t, len(got), len(want))
	for i, w := range want {
		g := got[i]
		assert.Check(t, g.Step == w.Step && g.Status == w.Status && g.Error == w.Error,
			"step %d:\n  chromedriver: %v\n  firefox:      %v", i, w, g)
		if why, ok := firefoxDiffers[w.Step]; ok {
			t.Logf("%s differs (%s):\n  chromedriver: %s\n  firefox:      %s", w.Step, why, w.Value, g.Value)
			continue
		}
		assert.Check(t, canonical(w.Value) == canonical(g.Value),
			"step %d %s:\n  chromedriver: %s\n  firefox:      %s", i, w.Step, w.Value, g.Value)
	}
	assert.Equal(t, env.Server.Sessions().Len(), 0, "wdext still holds deleted sessions")
}

// firefoxDiffers are the steps whose values differ from chromedriver's by
// the browsers' design (docs/firefox.md lists them for users).
var firefoxDiffers = map[string]string{
	"new session": "each browser's own capabilities: moz:* for Firefox, goog:* and chrome for Chrome",
	"get cookie":  `a cookie added without sameSite: Firefox reports "None", Chrome "Lax"`,
	"get cookies": `a cookie added without sameSite: Firefox reports "None", Chrome "Lax"`,
}

// canonical is a value with references masked (chromedriver's element
// references and hex window handles, Firefox's UUIDs for both) and JSON
// objects' keys in order.
func canonical(value string) string {
	value = uuids.ReplaceAllString(normalise(value), "<ref>")
	value = strings.NewReplacer("<element>", "<ref>", "<id>", "<ref>").Replace(value)
	var v any
	if json.Unmarshal([]byte(value), &v) != nil {
		return value
	}
	out, _ := json.Marshal(v)
	return string(out)
}
