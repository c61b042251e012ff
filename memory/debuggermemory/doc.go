// Package debuggermemory owns wdext's Debugger.Memory-style WebDriver
// commands: a census of the heap, an allocation log, a GC log and live
// objects by creation site. It brings the vocabulary of SpiderMonkey's
// Debugger.Memory and WebKit's 2009 live object profiler to whatever heap
// data the session's engine has. Register adds the commands to a server.
//
//   - POST /session/{id}/wdext/memory/census {"breakdown", "targets"}:
//     takeCensus's result for the breakdown (package memory/census: the
//     language, its defaults, the result shapes) over the engine's heap
//     snapshots (engine.HeapSource): the current page's, or with
//     "targets": "all" one per isolate of the page, its out-of-process
//     frames and workers ({"targets": [{"type", "url", "targetId",
//     "census"|"error"}]}).
//   - POST …/allocations {"trackingAllocationSites",
//     "allocationSamplingProbability", "maxAllocationsLogLength"} and
//     POST …/allocations/drain: Debugger.Memory's allocation accessors and
//     drainAllocationsLog over the engine's allocation sampler
//     (engine.AllocationSampler); the log, its bound and overflow are kept
//     here, per session.
//   - POST …/gc-log {"collect"} and GET …/gc-log: the engine's GC log
//     (engine.GCLogger).
//   - POST …/live-objects/start and …/stop: the objects allocated between
//     the two and still alive, grouped by class and creation site
//     (engine.LiveObjectTracker).
//
// The commands take exactly the parameters named: an unknown member is
// "invalid argument", so that a misspelt option is an error rather than
// ignored (the memory commands follow the same rule). A command whose
// engine lacks the capability is "unsupported operation" saying what is
// missing (package engine). A census, the allocation log and live
// objects keep the server's command deadline (a census of a big heap
// takes long), but on Chromium a page that does not answer fails them
// within seconds with its state ("timeout" for a busy main thread,
// "unexpected alert open", "tab crashed"), and a session deleted under a
// command answers "invalid session id". How each engine serves them:
// packages engine/chromium (V8 over CDP) and engine/webkitgtk
// (JavaScriptCore over WebKit's remote inspector), and docs/memory.md,
// docs/chromium.md, docs/webkitgtk.md.
package debuggermemory
