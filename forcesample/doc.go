// Package forcesample owns the JS Self-Profiling "Force Sample" WebDriver
// extension command, POST /session/{id}/forcesample: every Profiler in
// state started, in every frame and window of the session, takes one
// sample now.
//
// On Chromium the samples are the browser's own. Blink asks V8 for a
// sample (v8::CpuProfiler::CollectSample, which every profiler of the
// isolate obeys) whenever it writes a trace event with a call stack while
// the tracing category disabled-by-default-devtools.timeline.stack is
// enabled. A force therefore arms that category, makes each isolate of the
// session write exactly one such event (queueMicrotask, evaluated through
// CDP in one target per isolate: top documents, out-of-process iframes,
// other windows), and disarms it again, so the page's own timers never
// sample because of wdext between calls.
//
// Two limits of Chromium 156, measured (see the tests):
//   - Of several started Profilers in one isolate (one document, or
//     same-process frames), only the most recently started one receives
//     forced samples; each profiler in its own process gets exactly one.
//   - A page-side synchronous force (WPT RFC 81) cannot be built on this
//     mechanism: Tracing.start needs the renderer's main thread, so it
//     cannot complete while the page waits for it in a synchronous call.
package forcesample
