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
//   - A page-side synchronous force (WPT RFC 81) cannot be built exactly
//     on this mechanism: a browser-level Tracing.start does not complete
//     while the page blocks in a synchronous call, and where a start does
//     complete (a page-level session, a debugger pause) the renderer turns
//     the category on asynchronously, tens of milliseconds later, so the
//     page cannot know when to take its sample.
//
// On WebKitGTK (sessions whose browserName is MiniBrowser, see package
// webkitgtk) there is no Profiler and no CDP: Profiler is wdext's polyfill
// (package polyfill), which the webkitgtk upstream injects at document
// start into every document loaded over http, and Command dispatches to
// WebKitGTK. It sends WebDriver commands straight to the session's
// driver: it notes the client's current window (Get Window Handle) and
// the path of child indexes from that window's top to the current frame
// (one script there), then for every window handle switches to it and
// visits every frame depth first (Switch To Frame by index, Switch To
// Parent Frame), calling the polyfill's forceSample hook once per frame —
// one stack-less sample in every started profiler of that realm — and
// finally switches back to the noted window and walks the path again.
// Measured on WebKitGTK 2.50.6: every profiler, several per document
// included, gets exactly one sample per call (the Chromium limits above
// do not apply). Limits: a command the client sends concurrently on the
// same session during a force runs in whatever frame the force is
// visiting; a client whose current frame was already discarded ends up
// in its window's top-level context; a client whose current window was
// closed gets the driver's "no such window"; documents not loaded over http
// (about:blank, srcdoc, data:, https) have no polyfill and so no
// profilers to sample.
package forcesample
