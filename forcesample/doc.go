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
// The page-side variant (testdriver's synchronous test_driver.force_sample)
// is PageHandler: the page arms through a synchronous request, takes the
// sample with its own stack, and disarms.
package forcesample
