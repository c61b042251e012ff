// Package memory owns wdext's model of the Measure Memory API
// (performance.measureUserAgentSpecificMemory): the MemoryMeasurement result
// dictionaries and their JSON shape, a validator for the invariants the spec
// promises about a result, and the spec's algorithms that turn an
// implementation-defined intermediate memory measurement (bytes attributed to
// JavaScript realms) into a result, including cross-origin aggregation.
//
// It is pure Go and knows nothing of browsers; the engine-backed measurement
// commands that feed it from CDP or BiDi are meant to live here later too.
//
// The normative reference is the newer WICG draft ("measureUserAgentSpecificMemory",
// the "types" member, the empty breakdown entry, the address-space rule);
// section numbers in comments refer to it.
package memory
