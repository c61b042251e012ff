package chromium_test

import (
	"encoding/json"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium"
)

var testDefaults = chromium.Defaults{
	Binary: "/usr/bin/chromium",
	Args:   []string{"--no-sandbox", "--headless=new", "--disable-gpu"},
}

// apply runs testDefaults.Apply on body (JSON) and returns the result as
// JSON, so that cases read as what goes over the wire.
func apply(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	assert.NilError(t, json.Unmarshal([]byte(body), &m))
	testDefaults.Apply(m)
	data, err := json.Marshal(m)
	assert.NilError(t, err)
	var out map[string]any
	assert.NilError(t, json.Unmarshal(data, &out))
	return out
}

func jsonOf(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	assert.NilError(t, json.Unmarshal([]byte(s), &m))
	return m
}

func TestChromeDefaultsApply(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{{
		name: "empty body",
		in:   `{}`,
		want: `{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{"binary":"/usr/bin/chromium","args":["--no-sandbox","--headless=new","--disable-gpu"]}}}}`,
	}, {
		name: "alwaysMatch",
		in:   `{"capabilities":{"alwaysMatch":{"browserName":"chrome"}}}`,
		want: `{"capabilities":{"alwaysMatch":{"browserName":"chrome","goog:chromeOptions":{"binary":"/usr/bin/chromium","args":["--no-sandbox","--headless=new","--disable-gpu"]}}}}`,
	}, {
		name: "the client's binary stays",
		in:   `{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{"binary":"/opt/my/chrome"}}}}`,
		want: `{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{"binary":"/opt/my/chrome","args":["--no-sandbox","--headless=new","--disable-gpu"]}}}}`,
	}, {
		name: "an empty binary is the client's too",
		in:   `{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{"binary":""}}}}`,
		want: `{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{"binary":"","args":["--no-sandbox","--headless=new","--disable-gpu"]}}}}`,
	}, {
		name: "the client's switch with another value stays, alone",
		in:   `{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{"args":["--headless"]}}}}`,
		want: `{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{"binary":"/usr/bin/chromium","args":["--headless","--no-sandbox","--disable-gpu"]}}}}`,
	}, {
		name: "headless=old, and a switch written with one dash",
		in:   `{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{"args":["--headless=old","-disable-gpu","--window-size=800,600"]}}}}`,
		want: `{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{"binary":"/usr/bin/chromium","args":["--headless=old","-disable-gpu","--window-size=800,600","--no-sandbox"]}}}}`,
	}, {
		name: "other chromeOptions members stay",
		in:   `{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{"extensions":[],"prefs":{"a":1}}}}}`,
		want: `{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{"extensions":[],"prefs":{"a":1},"binary":"/usr/bin/chromium","args":["--no-sandbox","--headless=new","--disable-gpu"]}}}}`,
	}, {
		name: "firstMatch entries with chromeOptions get them, alwaysMatch not",
		in:   `{"capabilities":{"alwaysMatch":{"acceptInsecureCerts":true},"firstMatch":[{"goog:chromeOptions":{"args":["--headless"]}},{"browserName":"firefox"}]}}`,
		want: `{"capabilities":{"alwaysMatch":{"acceptInsecureCerts":true},"firstMatch":[{"goog:chromeOptions":{"binary":"/usr/bin/chromium","args":["--headless","--no-sandbox","--disable-gpu"]}},{"browserName":"firefox"}]}}`,
	}, {
		name: "firstMatch without chromeOptions: alwaysMatch gets them",
		in:   `{"capabilities":{"firstMatch":[{"browserName":"chrome"}]}}`,
		want: `{"capabilities":{"firstMatch":[{"browserName":"chrome"}],"alwaysMatch":{"goog:chromeOptions":{"binary":"/usr/bin/chromium","args":["--no-sandbox","--headless=new","--disable-gpu"]}}}}`,
	}, {
		name: "another browser",
		in:   `{"capabilities":{"alwaysMatch":{"browserName":"firefox"}}}`,
		want: `{"capabilities":{"alwaysMatch":{"browserName":"firefox"}}}`,
	}, {
		name: "another browser in desiredCapabilities",
		in:   `{"desiredCapabilities":{"browserName":"MicrosoftEdge"}}`,
		want: `{"desiredCapabilities":{"browserName":"MicrosoftEdge"}}`,
	}, {
		name: "chromium",
		in:   `{"capabilities":{"alwaysMatch":{"browserName":"chromium"}}}`,
		want: `{"capabilities":{"alwaysMatch":{"browserName":"chromium","goog:chromeOptions":{"binary":"/usr/bin/chromium","args":["--no-sandbox","--headless=new","--disable-gpu"]}}}}`,
	}, {
		// A legacy (JSON wire protocol) request must stay one: adding W3C
		// capabilities would switch chromedriver to the W3C dialect, which
		// ignores desiredCapabilities — the client's options with them.
		name: "desiredCapabilities only",
		in:   `{"desiredCapabilities":{"browserName":"chrome","goog:chromeOptions":{"args":["--foo"]}}}`,
		want: `{"desiredCapabilities":{"browserName":"chrome","goog:chromeOptions":{"binary":"/usr/bin/chromium","args":["--foo","--no-sandbox","--headless=new","--disable-gpu"]}}}`,
	}, {
		name: "both dialects (tebeka, Selenium 3)",
		in:   `{"capabilities":{"alwaysMatch":{"browserName":"chrome"}},"desiredCapabilities":{"browserName":"chrome"}}`,
		want: `{"capabilities":{"alwaysMatch":{"browserName":"chrome","goog:chromeOptions":{"binary":"/usr/bin/chromium","args":["--no-sandbox","--headless=new","--disable-gpu"]}}},"desiredCapabilities":{"browserName":"chrome","goog:chromeOptions":{"binary":"/usr/bin/chromium","args":["--no-sandbox","--headless=new","--disable-gpu"]}}}`,
	}, {
		name: "malformed chromeOptions are the driver's to refuse",
		in:   `{"capabilities":{"alwaysMatch":{"goog:chromeOptions":"nope"}}}`,
		want: `{"capabilities":{"alwaysMatch":{"goog:chromeOptions":"nope"}}}`,
	}, {
		name: "malformed args are left as sent",
		in:   `{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{"binary":"/b","args":"--headless"}}}}`,
		want: `{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{"binary":"/b","args":"--headless"}}}}`,
	}, {
		name: "malformed capabilities are left as sent",
		in:   `{"capabilities":[1,2],"other":true}`,
		want: `{"capabilities":[1,2],"other":true}`,
	}, {
		name: "malformed alwaysMatch is left as sent",
		in:   `{"capabilities":{"alwaysMatch":7}}`,
		want: `{"capabilities":{"alwaysMatch":7}}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			assert.DeepEqual(t, apply(t, tc.in), jsonOf(t, tc.want))
		})
	}
}

// No defaults to add: nothing to do for the client's binary or args.
func TestChromeDefaultsEmpty(t *testing.T) {
	var m map[string]any
	json.Unmarshal([]byte(`{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{"args":["--x"]}}}}`), &m)
	chromium.Defaults{}.Apply(m)
	data, _ := json.Marshal(m)
	assert.Equal(t, string(data), `{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{"args":["--x"]}}}}`)
}

// wdext's V8 flags share the client's --js-flags, ahead of them, and give
// way to a flag the client named in either sense.
func TestChromeDefaultsJSFlags(t *testing.T) {
	d := chromium.Defaults{JSFlags: []string{"--no-compact"}}
	for _, tc := range []struct{ in, want []any }{
		{in: nil, want: []any{"--js-flags=--no-compact"}},
		{in: []any{"--x"}, want: []any{"--x", "--js-flags=--no-compact"}},
		{in: []any{"--js-flags=--expose-gc", "--x"}, want: []any{"--js-flags=--no-compact --expose-gc", "--x"}},
		{in: []any{"--js-flags=  --expose-gc   --trace-gc"}, want: []any{"--js-flags=--no-compact --expose-gc --trace-gc"}},
		{in: []any{"--js-flags="}, want: []any{"--js-flags=--no-compact"}},
		{in: []any{"--js-flags=--compact"}, want: []any{"--js-flags=--compact"}},
		{in: []any{"--js-flags=--nocompact"}, want: []any{"--js-flags=--nocompact"}},
		{in: []any{"--js-flags=--no_compact --expose-gc"}, want: []any{"--js-flags=--no_compact --expose-gc"}},
		{in: []any{"--js-flags=--compact=true"}, want: []any{"--js-flags=--compact=true"}},
		{in: []any{"--js-flags=--concurrent-marking"}, want: []any{"--js-flags=--no-compact --concurrent-marking"}},
		// Chromium takes the last of several --js-flags.
		{in: []any{"--js-flags=--a", "--js-flags=--b"}, want: []any{"--js-flags=--a", "--js-flags=--no-compact --b"}},
		{in: []any{float64(1), "--js-flags=--b"}, want: []any{float64(1), "--js-flags=--no-compact --b"}},
	} {
		opts := map[string]any{}
		if tc.in != nil {
			opts["args"] = tc.in
		}
		body := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{"goog:chromeOptions": opts}}}
		d.Apply(body)
		assert.DeepEqual(t, opts["args"], tc.want)
	}
}
