// Package report owns wdext's HTML reports: one self-contained file (CSS,
// script and drawings inline; a Content-Security-Policy that forbids
// loading anything; no libraries) that a browser opens from file://, for
// what wdext's commands and tests produce:
//
//   - a JS Self-Profiling trace (the spec's ProfilerTrace) as a flame
//     chart over time: a lane of samples (forced ones marked ▼), the
//     stacks as an icicle, outermost frame on top, each frame a box
//     (data-f: its frame id) coloured by script, its name and script on
//     hover; a table of functions by self and total samples. Several
//     traces are drawn one under the other, each on its own time axis;
//   - a Debugger.Memory-style census as a squarified treemap, area bytes
//     (coarseType groups holding objectClass cells with the default
//     breakdown; any breakdown's nesting), with bytes and count in the
//     labels, and a table of every item; two censuses as a treemap of
//     what grew and a table of every change;
//   - a leak verdict (wire.LeakReport, or one per target of a
//     wire.AllLeaks): each group with its count, its retainer path as a
//     chain from the root to the leaked thing, and the frame that created
//     it;
//   - a `wdext wpt` run (AddWPT): tests, subtests, expected and unexpected
//     results, durations, and per test what it handed over
//     (wpt.Attachment), drawn as above.
//
// # Forced samples
//
// A ProfilerTrace does not say which samples were forced: the spec's
// samples carry a timestamp, a stack and an optional marker, and forced
// ones have no mark (and on Chromium no page frames to tell them by).
// So whoever forced them says when: TraceInput.Forced lists spans of the
// trace's time during which a force ran, and a sample inside one (give or
// take Slack, the browsers' clock coarsening) is drawn as forced. wdext
// wpt records each test_driver.force_sample() call's span
// (wpt.Result.Forced, epoch milliseconds, turned into each trace's time
// with the trace's timeOrigin); `wdext report trace --forced` takes
// spans or timestamps a client recorded (performance.now() before and
// after its forcesample command), or a trace file may carry them
// ({"trace": …, "forced": […]}).
//
// # Drawing
//
// Everything is laid out in Go and written as SVG and HTML through
// html/template (which escapes what pages named: function names, URLs,
// class names); the embedded script (assets/report.js, ~50 lines) only
// shows tooltips and filters the WPT list, writing text with
// textContent. Large inputs stay bounded: flame boxes under a quarter of
// a unit wide or 80 frames deep are counted, not drawn; treemap items
// under 0.04% of the census are lumped into one "N more" cell per group;
// tables list the first 400 items and say how many more there are.
//
// Readers (ParseTrace, ParseCensus, ParseLeaks) accept the JSON as wdext
// and browsers write it, also wrapped in a WebDriver answer
// ({"value": …}), and reject anything else with an error naming the part;
// ids that point outside their lists and stack cycles are errors, never
// panics.
package report
