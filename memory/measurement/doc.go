// Package measurement owns the Measure Memory spec's algorithms (the WICG
// draft of performance.measureUserAgentSpecificMemory): realms and
// attribution tokens (Realm, ObtainWindowMemoryAttributionToken), the
// conversion of an engine's intermediate results into a MemoryMeasurement
// (EngineHeaps.Intermediate, CreateNewMemoryMeasurement, including
// cross-origin aggregation), and its validation (Validate, the invariants
// the spec promises about a result).
//
// Its rules:
//   - It is a leaf: it imports only package wire (whose MemoryMeasurement
//     and parts are the result types; there are no aliases here) and the
//     standard library. Engines (engine/chromium, engine/webkitgtk) build
//     an EngineHeaps and call it without importing the command package
//     memory, which serves the commands over HTTP.
//   - It knows nothing of browsers, sessions or HTTP: every input is plain
//     data, so each algorithm is tested on its own, against the spec's
//     examples (testdata: zh-*.json from the newer draft, en-*.json from
//     the older one).
//   - Comments name the spec's steps; section numbers refer to the newer
//     WICG draft. A deliberate deviation from the spec is said where it is
//     made (ObtainWindowMemoryAttributionToken, EngineHeaps.Intermediate).
package measurement
