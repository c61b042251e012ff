package firefox

import (
	"encoding/json"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/wire"
)

func process(t *testing.T, body string) (map[string]any, options, error) {
	var b map[string]any
	assert.NilError(t, json.Unmarshal([]byte(body), &b))
	return processCapabilities(b, "/usr/bin/firefox-esr")
}

func TestProcessCapabilities(t *testing.T) {
	caps, o, err := process(t, `{"capabilities": {
		"alwaysMatch": {"acceptInsecureCerts": true, "webSocketUrl": true, "goog:chromeOptions": {}, "timeouts": null},
		"firstMatch": [{"browserName": "chrome"}, {"browserName": "firefox", "moz:firefoxOptions": {
			"binary": "/opt/ff", "args": ["-width", "800"], "prefs": {"a.b": 1, "c": "d"}, "env": {"MOZ_LOG": "x"}, "log": {"level": "trace"}}}]}}`)
	assert.NilError(t, err)
	assert.DeepEqual(t, caps, map[string]any{"acceptInsecureCerts": true, "webSocketUrl": true, "browserName": "firefox"})
	assert.Equal(t, o.binary, "/opt/ff")
	assert.DeepEqual(t, o.args, []string{"-width", "800"})
	assert.DeepEqual(t, o.prefs, map[string]any{"a.b": 1.0, "c": "d"})
	assert.DeepEqual(t, o.env, map[string]string{"MOZ_LOG": "x"})

	caps, o, err = process(t, `{}`)
	assert.NilError(t, err)
	assert.DeepEqual(t, caps, map[string]any{})
	assert.Equal(t, o.binary, "/usr/bin/firefox-esr")

	for body, code := range map[string]wire.ErrorCode{
		`{"capabilities": 1}`: wire.InvalidArgument,
		`{"capabilities": {"alwaysMatch": {"browserName": "firefox"}, "firstMatch": [{"browserName": "firefox"}]}}`: wire.InvalidArgument,
		`{"capabilities": {"firstMatch": [1]}}`:                                           wire.InvalidArgument,
		`{"capabilities": {"alwaysMatch": {"platformName": "windows"}}}`:                  wire.SessionNotCreated,
		`{"capabilities": {"alwaysMatch": {"moz:firefoxOptions": {"prefs": {"a": []}}}}}`: wire.InvalidArgument,
		`{"capabilities": {"alwaysMatch": {"moz:firefoxOptions": {"binary": ""}}}}`:       wire.InvalidArgument,
		`{"capabilities": {"alwaysMatch": {"moz:firefoxOptions": {"env": {"A": 1}}}}}`:    wire.InvalidArgument,
		`{"capabilities": {"alwaysMatch": {"moz:firefoxOptions": 3}}}`:                    wire.InvalidArgument,
		`{"capabilities": {"alwaysMatch": {"unhandledPromptBehavior": 3}}}`:               wire.InvalidArgument,
	} {
		_, _, err := process(t, body)
		assert.Equal(t, wire.AsError(err).Code, code, "%s: %v", body, err)
	}
}

func TestUserJS(t *testing.T) {
	js := userJS(map[string]any{"browser.startup.page": 3, "x\"y": "a'b"})
	assert.Assert(t, strings.Contains(js, `user_pref("browser.startup.page", 3);`), js)
	assert.Assert(t, strings.Contains(js, `user_pref("x\"y", "a'b");`), js)
	assert.Assert(t, strings.Contains(js, `user_pref("marionette.port", 0);`), js)
}
