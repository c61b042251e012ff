package firefox

import (
	"fmt"
	"maps"
	"strings"

	"github.com/wdext/wdext/wire"
)

// optionsCap is Firefox's vendor capability: the binary, its arguments,
// prefs and environment.
const optionsCap = "moz:firefoxOptions"

// options are how a session's Firefox is started, from its
// moz:firefoxOptions.
type options struct {
	binary string
	args   []string
	prefs  map[string]any
	env    map[string]string
}

// processCapabilities does what WebDriver's "process capabilities" asks of
// a remote end (§7.2) with a new-session body: it validates alwaysMatch and
// each firstMatch entry, merges them, and returns the first merged set
// this Firefox matches, flat, as Marionette takes it, with its
// moz:firefoxOptions taken out into o. binary is the default browser.
func processCapabilities(body map[string]any, binary string) (flat map[string]any, o options, err error) {
	req := map[string]any{}
	switch c := body["capabilities"].(type) {
	case map[string]any:
		req = c
	case nil:
	default:
		return nil, o, wire.Errorf(wire.InvalidArgument, "capabilities must be an object")
	}
	always := map[string]any{}
	if a, ok := req["alwaysMatch"]; ok && a != nil {
		m, ok := a.(map[string]any)
		if !ok {
			return nil, o, wire.Errorf(wire.InvalidArgument, "alwaysMatch must be an object")
		}
		if always, err = validate(m); err != nil {
			return nil, o, err
		}
	}
	firsts := []any{map[string]any{}}
	if f, ok := req["firstMatch"]; ok && f != nil {
		list, ok := f.([]any)
		if !ok || len(list) == 0 {
			return nil, o, wire.Errorf(wire.InvalidArgument, "firstMatch must be a non-empty array")
		}
		firsts = list
	}
	var merged []map[string]any
	for _, f := range firsts {
		m, ok := f.(map[string]any)
		if !ok {
			return nil, o, wire.Errorf(wire.InvalidArgument, "each firstMatch entry must be an object")
		}
		first, err := validate(m)
		if err != nil {
			return nil, o, err
		}
		all := maps.Clone(always)
		for k, v := range first {
			if _, dup := always[k]; dup {
				return nil, o, wire.Errorf(wire.InvalidArgument, "%q is in both alwaysMatch and firstMatch", k)
			}
			all[k] = v
		}
		merged = append(merged, all)
	}
	var why []string
	for _, caps := range merged {
		if reason := mismatch(caps); reason != "" {
			why = append(why, reason)
			continue
		}
		dropForeign(caps)
		o, err := takeOptions(caps, binary)
		return caps, o, err
	}
	return nil, o, wire.Errorf(wire.SessionNotCreated, "no capabilities match Firefox: %s", strings.Join(why, "; "))
}

// validate checks one capabilities object (§7.2.1's "validate
// capabilities") and returns it without its null entries.
func validate(caps map[string]any) (map[string]any, error) {
	out := map[string]any{}
	for k, v := range caps {
		if v == nil {
			continue
		}
		ok := true
		switch k {
		case "acceptInsecureCerts", "strictFileInteractability", "webSocketUrl", "setWindowRect":
			_, ok = v.(bool)
		case "browserName", "browserVersion", "platformName":
			_, ok = v.(string)
		case "pageLoadStrategy":
			s, _ := v.(string)
			ok = s == "none" || s == "eager" || s == "normal"
		case "proxy", "timeouts":
			_, ok = v.(map[string]any)
		case "unhandledPromptBehavior":
			switch v.(type) {
			case string, map[string]any:
			default:
				ok = false
			}
		default:
			if !strings.Contains(k, ":") {
				return nil, wire.Errorf(wire.InvalidArgument, "unknown capability %q (an extension capability's name has a colon)", k)
			}
		}
		if !ok {
			return nil, wire.Errorf(wire.InvalidArgument, "capability %q has a value of the wrong type: %v", k, v)
		}
		out[k] = v
	}
	return out, nil
}

// mismatch says why a merged capabilities set cannot be Firefox's, or "".
func mismatch(caps map[string]any) string {
	if name, ok := caps["browserName"].(string); ok && name != BrowserName {
		return fmt.Sprintf("browserName %q is not %q", name, BrowserName)
	}
	if p, ok := caps["platformName"].(string); ok && !strings.EqualFold(p, "linux") && !strings.EqualFold(p, "any") {
		return fmt.Sprintf("platformName %q is not linux", p)
	}
	return ""
}

// dropForeign removes other vendors' capabilities (goog:chromeOptions),
// which Firefox ignores, as geckodriver does.
func dropForeign(caps map[string]any) {
	for k := range caps {
		if i := strings.IndexByte(k, ':'); i > 0 && k[:i] != "moz" {
			delete(caps, k)
		}
	}
}

// takeOptions removes moz:firefoxOptions from caps and returns it as
// launch options.
func takeOptions(caps map[string]any, binary string) (options, error) {
	o := options{binary: binary}
	raw, ok := caps[optionsCap]
	if !ok {
		return o, nil
	}
	delete(caps, optionsCap)
	m, ok := raw.(map[string]any)
	if !ok {
		return o, wire.Errorf(wire.InvalidArgument, "%s must be an object", optionsCap)
	}
	bad := func(what string) error {
		return wire.Errorf(wire.InvalidArgument, "%s.%s", optionsCap, what)
	}
	for k, v := range m {
		switch k {
		case "binary":
			s, ok := v.(string)
			if !ok || s == "" {
				return o, bad("binary must be a path")
			}
			o.binary = s
		case "args":
			list, ok := v.([]any)
			if !ok {
				return o, bad("args must be an array of strings")
			}
			for _, a := range list {
				s, ok := a.(string)
				if !ok {
					return o, bad("args must be an array of strings")
				}
				o.args = append(o.args, s)
			}
		case "prefs":
			p, ok := v.(map[string]any)
			if !ok {
				return o, bad("prefs must be an object")
			}
			for name, pv := range p {
				switch pv.(type) {
				case string, bool, float64:
				default:
					return o, bad(fmt.Sprintf("prefs[%q] must be a string, boolean or number", name))
				}
			}
			o.prefs = p
		case "env":
			e, ok := v.(map[string]any)
			if !ok {
				return o, bad("env must be an object of strings")
			}
			o.env = map[string]string{}
			for name, ev := range e {
				s, ok := ev.(string)
				if !ok {
					return o, bad("env must be an object of strings")
				}
				o.env[name] = s
			}
		case "log":
			// Firefox's own log level: its output is wdext's log already.
		default:
			// profile (a zipped profile), android*: wdext makes a fresh
			// profile on this machine's Firefox.
			return o, wire.Errorf(wire.SessionNotCreated, "%s.%s is not supported by wdext, which starts Firefox on a fresh profile of its own (use prefs and args)", optionsCap, k)
		}
	}
	return o, nil
}
