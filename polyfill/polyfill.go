package polyfill

import (
	_ "embed"
	"encoding/json"
)

//go:embed profiler.js
var source string

// Source is the polyfill: a JavaScript function expression of one
// argument, the global name to install the interface under.
func Source() string { return source }

// Script installs the polyfill as the global name (normally "Profiler")
// when evaluated in a window; it does nothing in a realm that has it
// already.
func Script(name string) string {
	n, _ := json.Marshal(name)
	return "(" + trimSemicolon(source) + ")(" + string(n) + ");"
}

func trimSemicolon(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == ';' || s[len(s)-1] == ' ') {
		s = s[:len(s)-1]
	}
	return s
}

// ForceSampleScript, run in a realm, adds one sample without a stack to
// every started profiler there and evaluates to how many took it (-1:
// the polyfill is not installed).
const ForceSampleScript = `const f = globalThis[Symbol.for("wdext.profiler.forceSample")]; return typeof f === "function" ? f() : -1;`

// ForceSampleHere is the expression a page calls for a synchronous
// forced sample carrying its own stack.
const ForceSampleHere = `globalThis[Symbol.for("wdext.profiler.forceSampleHere")]()`
