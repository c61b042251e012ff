// Package leakcheck owns wdext's leak check commands, the verdict memlab,
// fuite and BLeak give Puppeteer users, for any WebDriver client: does an
// action leak, what, who holds it, where was it made. Register adds them
// to a server:
//
//   - POST /session/{id}/wdext/memory/leaks/start {"targets": "page"} →
//     null: a full garbage collection in the page's isolate (VM), a
//     baseline heap snapshot, and allocation sites recorded from then on
//     where the engine can (Chromium).
//     "targets" may be left out; "all" does the same in each isolate of
//     the page, its out-of-process frames' and workers' too, where the
//     engine can (an engine.AllLeakTracker: Chromium).
//   - The client runs its scenario N times.
//   - POST …/leaks/stop {"iterations": N} → a GC, the final snapshot,
//     allocation recording off, and the verdict (wire.LeakReport, whose
//     rules are package memory/leaks'): the groups that grew by a
//     multiple of N, with a retainer path and a creation site each;
//     "leaks": [] when nothing leaks. After "all", a verdict per isolate
//     (wire.AllLeaks): a frame or worker that went away has an "error".
//
// The commands take exactly these parameters (and "sessionId"): see
// webdriver.DecodeParams. "iterations" is a whole number ≥ 1. stop
// without a start (or a second stop) is "invalid argument" naming the
// order; a start while a check is under way starts afresh. stop ends the
// check whatever its outcome. They ask the session's engine for an
// engine.LeakTracker (an engine.AllLeakTracker for "all"); an engine
// without one answers "unsupported operation". How Chromium and WebKitGTK
// do it, and what a navigation between start and stop or a deadline
// gives: docs/chromium.md and docs/webkitgtk.md, "Leak check"; the
// verdict's rules: docs/leaks.md.
// Both run under the server's command deadline; running out is the W3C
// "timeout" naming the phase ("leaks/stop: taking the final heap
// snapshot").
package leakcheck
