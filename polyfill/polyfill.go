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

// SetPolicyScript, run in a realm before its page's scripts, tells the
// polyfill whether the document's Document-Policy allows js-profiling
// (the first call in a realm wins): without it, new Profiler() throws a
// "NotAllowedError" DOMException, as the spec's constructor steps say.
func SetPolicyScript(allowed bool) string {
	b, _ := json.Marshal(allowed)
	return `(globalThis[Symbol.for("wdext.profiler.setPolicy")] || (() => {}))(` + string(b) + `);`
}

// EnableSamplerScript, run in a realm, says that the engine samples it
// periodically and delivers the samples when a profiler stops (see
// DeliverScript).
const EnableSamplerScript = `(globalThis[Symbol.for("wdext.profiler.enableSampler")] || (() => {}))();`

// StopMessage is the first argument of the console.debug message by which
// a profiler's stop() asks the engine for its periodic samples; the
// second is the token DeliverScript completes.
const StopMessage = "wdext.profiler.stop"

// Frame is a stack frame of a periodic sample: a function's name and,
// for a function of a script, the script's URL and the function's line
// and column (1-based).
type Frame struct {
	Name   string `json:"name"`
	URL    string `json:"url,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// Batch is periodic samples for DeliverScript: each sample is its time,
// in milliseconds since the epoch on the monotonic clock as
// performance.timeOrigin + performance.now() count them, and the indexes
// in Frames of its stack's frames, outermost first.
type Batch struct {
	Frames  []Frame  `json:"frames"`
	Samples [][2]any `json:"samples"`
}

// DeliverScript, run in a realm, gives batch to its live profilers (each
// keeps the samples of its own lifetime, one per sampleInterval at most,
// with its realm's frames only) and completes the stop() calls whose
// tokens are given; it evaluates to how many it completed.
func DeliverScript(tokens []string, batch Batch) string {
	if tokens == nil {
		tokens = []string{}
	}
	if batch.Frames == nil {
		batch.Frames = []Frame{}
	}
	if batch.Samples == nil {
		batch.Samples = [][2]any{}
	}
	t, _ := json.Marshal(tokens)
	b, _ := json.Marshal(batch)
	return `(() => { const d = globalThis[Symbol.for("wdext.profiler.deliver")]; return typeof d === "function" ? d(` + string(t) + `, ` + string(b) + `) : -1; })()`
}
