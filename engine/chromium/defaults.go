package chromium

import (
	"slices"
	"strings"
)

// Defaults are what wdext adds to a new-session request when it runs
// the driver itself: the machine's Chromium binary, the switches a
// headless, offline machine needs, and V8 flags. They never override the
// client: a binary the client named stays, a switch the client passed
// (with any value) is not added again, and a V8 flag the client named,
// in either sense, is not added.
type Defaults struct {
	Binary string
	Args   []string
	// JSFlags go into --js-flags, before the client's own flags there.
	JSFlags []string
}

// Apply adds the defaults to a decoded new-session body, in place: to each
// firstMatch entry that carries goog:chromeOptions, or else to alwaysMatch,
// and likewise to a legacy desiredCapabilities object. Entries that ask for
// a browser other than Chrome are left alone.
func (d Defaults) Apply(body map[string]any) {
	caps, ok := body["capabilities"].(map[string]any)
	// A legacy request (desiredCapabilities alone) stays one: W3C
	// capabilities would switch the driver to the W3C dialect, which
	// ignores desiredCapabilities and with them what the client asked for.
	_, legacy := body["desiredCapabilities"]
	if !ok && body["capabilities"] == nil && !legacy {
		caps = map[string]any{}
		body["capabilities"] = caps
	}
	if caps != nil {
		merged := false
		if first, ok := caps["firstMatch"].([]any); ok {
			for _, e := range first {
				if m, ok := e.(map[string]any); ok && m["goog:chromeOptions"] != nil {
					d.applyTo(m)
					merged = true
				}
			}
		}
		if !merged {
			always, ok := caps["alwaysMatch"].(map[string]any)
			if !ok && caps["alwaysMatch"] == nil {
				always = map[string]any{}
				caps["alwaysMatch"] = always
			}
			if always != nil {
				d.applyTo(always)
			}
		}
	}
	if desired, ok := body["desiredCapabilities"].(map[string]any); ok {
		d.applyTo(desired)
	}
}

func (d Defaults) applyTo(caps map[string]any) {
	if name, ok := caps["browserName"].(string); ok && name != "chrome" && name != "chromium" && name != "" {
		return
	}
	opts, ok := caps["goog:chromeOptions"].(map[string]any)
	if !ok {
		if caps["goog:chromeOptions"] != nil {
			return // malformed: let the driver say so
		}
		opts = map[string]any{}
		caps["goog:chromeOptions"] = opts
	}
	if _, set := opts["binary"]; !set && d.Binary != "" {
		opts["binary"] = d.Binary
	}
	args, ok := opts["args"].([]any)
	if !ok && opts["args"] != nil {
		return
	}
	for _, a := range d.Args {
		if !hasSwitch(args, switchName(a)) {
			args = append(args, a)
		}
	}
	args = d.withJSFlags(args)
	if len(args) > 0 {
		opts["args"] = args
	}
}

// withJSFlags adds d.JSFlags to the client's --js-flags switch, or adds
// one. Chromium honours a single --js-flags (the last), so the client's
// flags and wdext's share it.
func (d Defaults) withJSFlags(args []any) []any {
	at := -1
	var theirs []string
	for i, a := range args {
		if s, ok := a.(string); ok && switchName(s) == "js-flags" {
			at = i
			_, v, _ := strings.Cut(s, "=")
			theirs = strings.Fields(v)
		}
	}
	var ours []string
	for _, f := range d.JSFlags {
		if !slices.ContainsFunc(theirs, func(t string) bool { return sameV8Flag(t, f) }) {
			ours = append(ours, f)
		}
	}
	if len(ours) == 0 {
		return args
	}
	value := "--js-flags=" + strings.Join(append(ours, theirs...), " ")
	if at < 0 {
		return append(args, value)
	}
	args[at] = value
	return args
}

// sameV8Flag says whether two V8 flags name one flag, in either sense:
// "--compact", "--no-compact", "--nocompact" and "--no_compact" do.
func sameV8Flag(a, b string) bool {
	a, b = v8FlagName(a), v8FlagName(b)
	return a == b || "no"+a == b || "no"+b == a
}

// v8FlagName is a flag's name without its value, dashes and underscores
// (V8 takes - and _ alike): "--no-compact" is "nocompact".
func v8FlagName(flag string) string {
	name, _, _ := strings.Cut(flag, "=")
	return strings.NewReplacer("-", "", "_", "").Replace(name)
}

// switchName is a command-line switch without its value and dashes:
// "--headless=new" → "headless".
func switchName(arg string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return name
}

func hasSwitch(args []any, name string) bool {
	for _, a := range args {
		if s, ok := a.(string); ok && switchName(s) == name {
			return true
		}
	}
	return false
}
