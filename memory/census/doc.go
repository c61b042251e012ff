// Package census takes censuses of V8 and JavaScriptCore heap snapshots in
// the vocabulary of SpiderMonkey's Debugger.Memory.takeCensus
// (its documentation, docs/Debugger/Debugger.Memory.md in mozilla-central): the same breakdown
// language, the same defaults, the same result shapes, with V8's node types
// and JSC's classes standing in for SpiderMonkey's types.
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
// Take counts a Heap: V8 adapts a *heapsnapshot.Snapshot, JSC a
// *jscsnapshot.Snapshot, and ReadHeap (behind RunFile, `wdext census`)
// reads either, telling them apart by their first JSON member. A Heap
// describes its nodes in bulk (Heap.Nodes), each of one Kind, which gives
// the internalType key and the coarse type and marks roots to skip.
//
// Every node of the snapshot is counted except the roots: V8's "synthetic"
// nodes (roots and groupings of roots) and JSC's "<root>". Both engines
// garbage-collect before taking a snapshot, so the nodes are the live heap,
// much as SpiderMonkey's census walks what is reachable. (DevTools hides
// the few nodes it finds unreachable from the root; they are counted here,
// no graph walk needed.) "bytes" is each node's self_size in V8, its
// estimated size in JSC: what the item uses directly.
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
// # JavaScriptCore
//
// A JSC node is a GC cell with a class name, mostly its ClassInfo name, and
// flags (package jscsnapshot). JSC writes no type, so the census works from
// those two and jscsnapshot.Snapshot.IsObject:
//
//   - coarseType: objects are the nodes IsObject reports: JSC's
//     ObjectSubtype nodes (plain objects and instances of classes, "Foo"),
//     and every cell JSC doesn't flag Internal (its Structure has a realm)
//     except strings, BigInts and the root. In WebKitGTK 2.50 that takes
//     in functions, arrays, ArrayBuffers, Window, documents and other DOM
//     wrappers, prototypes and scope objects such as
//     JSGlobalLexicalEnvironment, which SpiderMonkey counts as objects too.
//     Strings are the class "string" (JSString, ropes included). Scripts
//     are the classes ending in "Executable" or "CodeBlock": the
//     FunctionExecutable, ProgramExecutable, NativeExecutable and so on
//     that hold a function's or a program's code, their unlinked
//     (bytecode) forms, and the linked CodeBlocks, the counterparts of
//     SpiderMonkey's scripts and JIT code. Everything else is other:
//     Structure, PropertyTable, symbol, BigInt, GetterSetter,
//     SymbolTable, JSC's own cells.
//   - BigInt.prototype is named "BigInt" like BigInt values, so it is
//     counted with them under other: one object per realm.
//   - objectClass: an object's class name as JSC gives it, the constructor
//     name for ObjectSubtype nodes ("Foo", "Object"), the ClassInfo name
//     otherwise ("Function", "Array", "HTMLDivElement"; a prototype has the
//     name of its class, "HTMLDocument" for HTMLDocument.prototype).
//   - internalType: the class name, JSC's counterpart of SpiderMonkey's
//     C++ type names, except that ObjectSubtype nodes, whose ClassInfo is
//     JSObject's own, are all "Object": constructor names are for
//     objectClass.
//   - allocationStack: JSC records no allocation sites, so everything is
//     counted under the "noStack" entry.
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
// always present, is the "noStack" key: items without allocation data,
// which is all of them for JSC, and for V8 unless
// HeapProfiler.startTrackingHeapObjects ran with trackAllocations before
// the objects were allocated. Entries are in V8's trace node order, which
// is the order stacks were first seen.
package census
