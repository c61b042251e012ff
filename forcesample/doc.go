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
// (package polyfill), which the webkitgtk upstream puts first in every
// frame, and the command calls the polyfill's forceSample hook once per
// realm: one stack-less sample in every started profiler there. Measured
// on WebKitGTK 2.50.6: every profiler, several per document included,
// gets exactly one sample per call (the Chromium limits above do not
// apply). Two ways to reach the realms:
//
//   - WebKitInspector, for sessions whose browser wdext started (they
//     have session.Session.Inspector): through WebKit's remote inspector
//     (package wkinspector), each page's frames' main-world execution
//     contexts (Runtime.enable with the Page domain on), evaluated all at
//     once. No window or frame is switched, so a client command sent
//     meanwhile runs where the client is. Pages are the ones the inspector
//     client knows, looked for again when the driver lists more windows.
//   - WebKitGTK, for WebKitGTK drivers wdext does not run: WebDriver
//     commands sent straight to the session's driver. It notes the
//     client's current window and the path of child indexes from its top
//     to the current frame, then for every window visits every frame depth
//     first (Switch To Frame by index, Switch To Parent Frame) and finally
//     switches back. Limits: a command the client sends concurrently runs
//     in whatever frame the force is visiting; a client whose current
//     frame was discarded ends up in its window's top-level context; one
//     whose current window was closed gets the driver's "no such window".
package forcesample
