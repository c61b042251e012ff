// Package forcesample owns the JS Self-Profiling "Force Sample" WebDriver
// extension command, POST /session/{id}/forcesample: every Profiler in
// state started, in every frame and window of the session, takes one
// sample now.
//
// An upstream that implements the command itself keeps answering it
// (webdriver.Server.HandleFallback); elsewhere the session's engine takes
// the samples (engine.Sampler), within 30 s; on Chromium a page that cannot
// take them (its main thread busy, a user prompt open, its renderer
// crashed) fails the command within seconds with that state's W3C error.
//
// A call adds exactly one sample to each profiler it samples (which ones:
// below), whatever the pages do
// meanwhile (timers, animations, message handlers, an execute/async
// script of the client waiting in another window): on Chromium the force
// pauses the pages' main threads while it samples, so nothing of theirs
// samples with it. A profile also holds the samples the browser takes by
// itself (at a profiler's start, every sampleInterval, at V8
// deoptimizations), which are not forced. How, and the limits measured on
// each browser: packages engine/chromium (Chromium serves one forced
// sample per isolate, to its most recently started profiler) and
// engine/webkitgtk (every profiler of the Profiler polyfill, one sample
// each), and docs/forcesample.md, docs/chromium.md, docs/webkitgtk.md.
package forcesample
