// Package forcetrace reads the trace of every force of Chromium's engine
// (forcesample), for tests: the engine closes each trace unread, for
// nothing in it is needed to take the samples.
//
// A Proxy is a DevTools endpoint in front of a browser's that passes
// every message through; when a force's armed window ends
// (Tracing.tracingComplete of a Tracing.start of devtools.timeline) it
// reads the trace's stream itself, holding the engine's IO.close of it
// until it has, and reports what the trace shows (ForceReport): the
// triggers (one console.timeStamp per isolate, "wdext forcesample
// <target>"), and any other event that took a sample on their threads, a
// stray. Observe puts a Proxy between every Chromium session a test makes
// and its browser. Trace writes a trace as Chromium does, for fake
// browsers.
//
// Nothing but tests imports it.
package forcetrace
