// Package memory owns wdext's model of the Measure Memory API
// (performance.measureUserAgentSpecificMemory): the MemoryMeasurement result
// dictionaries and their JSON shape, a validator for the invariants the spec
// promises about a result, and the spec's algorithms that turn an
// implementation-defined intermediate memory measurement (bytes attributed to
// JavaScript realms) into a result, including cross-origin aggregation.
//
// That library is pure Go and knows nothing of browsers. The package also
// owns the WebDriver extension commands built on it (Register adds them):
//
//   - POST /session/{id}/wdext/memory/measure {"source", "timeout"} → a
//     MemoryMeasurement of the session's current top-level browsing
//     context. Source "api" runs the page's own
//     performance.measureUserAgentSpecificMemory() and makes it settle at
//     once by forcing, over CDP, the garbage collections Chromium otherwise
//     waits 10–20 s for (see measureAPI for why that and not the
//     ForceEagerMeasureMemory switch). Source "engine" reads per-isolate
//     heap usage, frame trees, frame owners and worker targets over CDP
//     (EngineHeaps) and runs the spec's algorithms on them: it works on
//     pages that are not cross-origin isolated and counts the cross-site
//     out-of-process iframes the page API leaves out. The default is "api"
//     where the page is cross-origin isolated, else "engine". Every result
//     passes Validate.
//     On WebKitGTK (sessions with session.Session.Inspector) source
//     "engine" goes through the browser's remote inspector instead
//     (webkit.go): one entry for the web process's VM, one per dedicated
//     worker, sized by JavaScriptCore heap snapshots; "api" is unsupported
//     (WebKit has no Measure Memory API).
//   - POST /session/{id}/wdext/memory/gc {"timeout"} → a full garbage
//     collection in every isolate of the page (its process, out-of-process
//     iframes, dedicated workers), with each one's used heap before and
//     after (GCResult).
//
// Both are bounded by "timeout" (ms, default 10 s); running out is the W3C
// "timeout" error, whose message names what was still pending (typically a
// worker whose thread is busy and cannot run the collection).
//
// The normative reference is the newer WICG draft ("measureUserAgentSpecificMemory",
// the "types" member, the empty breakdown entry, the address-space rule);
// section numbers in comments refer to it.
package memory
