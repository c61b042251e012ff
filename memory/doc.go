// Package memory owns the Measure Memory WebDriver extension commands
// (Register adds them to a webdriver.Server): parsing their parameters,
// asking the session's engine (package engine) for a MemoryMeasurer or a
// GarbageCollector, and bounding the call by "timeout". The commands are
// engine-neutral; the spec's algorithms and the validator are package
// memory/measurement's, and the result types (MemoryMeasurement, GCResult,
// their JSON shape) are package wire's, so that engines and clients use
// them without this package.
//
//   - POST /session/{id}/wdext/memory/measure {"source", "timeout"} → a
//     MemoryMeasurement of the session's current top-level browsing
//     context. Source "api" runs the page's own
//     performance.measureUserAgentSpecificMemory() and makes it settle at
//     once; source "engine" builds the result from the engine's own heap
//     figures (measurement.EngineHeaps) with the spec's algorithms, and
//     counts the cross-site out-of-process iframes the page API leaves
//     out. The default is "api" where the page is cross-origin isolated,
//     else "engine". How each engine does it: engine/chromium (CDP) and
//     engine/webkitgtk (the remote inspector; no "api" there), and
//     docs/chromium.md, docs/webkitgtk.md.
//   - POST /session/{id}/wdext/memory/gc {"timeout"} → a full garbage
//     collection in every heap of the page (its process, out-of-process
//     iframes, dedicated workers), with each one's used heap before and
//     after (GCResult).
//
// Both take exactly these parameters (and "sessionId", which Selenium
// clients add): see webdriver.DecodeParams.
//
// Both are bounded by "timeout" (ms, default 10 s); running out is the W3C
// "timeout" error, whose message names what was still pending (typically a
// worker whose thread is busy and cannot run the collection). On Chromium
// a page that does not answer at all fails sooner, with its state:
// "timeout" for a main thread busy in a script, "unexpected alert open" for
// a user prompt, chromedriver's "tab crashed" (see engine/chromium and
// docs/chromium.md).
package memory
