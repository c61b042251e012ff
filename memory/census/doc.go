// Package census takes censuses of V8 heap snapshots in the vocabulary of
// SpiderMonkey's Debugger.Memory.takeCensus
// (shared/specs/spidermonkey-debugger-memory.md): the same breakdown
// language, the same defaults, the same result shapes, with V8's node types
// standing in for SpiderMonkey's.
//
// # Breakdowns and defaults
//
// Parse reads a breakdown from JSON into a Breakdown: Count, CoarseType,
// ObjectClass, InternalType, AllocationStack or List (an array). The defaults
// are the documented ones:
//
//   - No breakdown at all (empty input) is Default(): "If the options
//     argument has no breakdown property, takeCensus defaults to the
//     following: { by: "coarseType", objects: { by: "objectClass" }, other:
//     { by: "internalType" } }".
//   - Count's flags: "Both count and bytes are optional; if omitted, they
//     default to true."
//   - CoarseType's parts: "All breakdown values are optional, and default to
//     { type: "count" }" (read "by"; the doc's "type" is a slip).
//   - "then" and "other": "all then and other properties are optional. If
//     omitted, they are treated as if they were { type: "count" }".
//   - AllocationStack's "noStack" is not covered by that sentence; like
//     SpiderMonkey's implementation, an omitted one is a full count too.
//
// Parse is stricter than SpiderMonkey, which ignores what it doesn't read:
// a property a breakdown doesn't take (a typo such as "byte", or
// SpiderMonkey's undocumented "label" and "domNode"), a non-boolean flag, a
// null where a breakdown belongs, and more than MaxParts breakdowns are
// errors. So are "bucket", "filename" and "descriptiveType", which
// SpiderMonkey implements but the documentation doesn't describe. An error
// is an *Error whose Path names the bad part, e.g. "breakdown.then.by";
// the server reports it as "invalid argument".
//
// # What is counted
//
// Every node of the snapshot except V8's "synthetic" ones, which are roots
// and groupings of roots, not heap items. V8 garbage-collects before taking
// a snapshot, so the nodes are the live heap, much as SpiderMonkey's census
// walks what is reachable. (DevTools hides the few nodes it finds
// unreachable from the root; they are counted here, no graph walk needed.)
// "bytes" is each node's self_size, what the item uses directly.
//
// # V8 node types
//
//   - coarseType: "object", "closure" and "regexp" are objects; "code" is
//     scripts (V8 files bytecode, compiled code, SharedFunctionInfo and
//     Script objects there); "string", "concatenated string" and "sliced
//     string" are strings; everything else is other: "hidden", "array",
//     "number", "native", "object shape", "symbol", "bigint", and unknown
//     types.
//   - V8's "array" type is not JavaScript arrays: it is internal backing
//     stores (FixedArray, FixedDoubleArray, ByteArray: object properties and
//     elements, and V8's own tables). JavaScript arrays are "object" nodes
//     named "Array". SpiderMonkey counts backing stores in their object's
//     size rather than as items, so they belong with other, not objects.
//   - objectClass: an object node's class is its V8 name, the constructor
//     name ("Object", "Array", "HTMLDivElement", a user class), closures are
//     "Function" and regexps "RegExp" (heapsnapshot.Snapshot.ClassName).
//     Everything else goes to "other"; as in SpiderMonkey, that key hides a
//     class that is itself named "other".
//   - internalType: the V8 node type name ("object", "object shape", ...),
//     V8's counterpart of SpiderMonkey's C++ type names.
//
// # Results
//
// Take returns values that marshal to takeCensus's JSON: {"count","bytes"}
// objects (Counts), {"objects","scripts","strings","other"} (Coarse), objects
// keyed by class or type name (map[string]any), and arrays for List. For
// allocationStack SpiderMonkey returns a Map keyed by SavedFrame objects,
// which JSON lacks; the result here is an array of StackEntry:
//
//	[ {"stack": [frame, ...], "census": result}, ...,
//	  {"stack": null, "noStack": true, "census": result} ]
//
// Each stack lists frames youngest first, with SavedFrame's property names
// (functionDisplayName, source, sourceId, line, column). An empty stack is
// the Map's null key (allocated with no JavaScript running); the last entry,
// always present, is the "noStack" key: items V8 has no allocation data
// for, which is all of them unless HeapProfiler.startTrackingHeapObjects
// ran with trackAllocations before the objects were allocated. Entries are
// in V8's trace node order, which is the order stacks were first seen.
package census
