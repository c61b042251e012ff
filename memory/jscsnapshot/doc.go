// Package jscsnapshot reads JavaScriptCore heap snapshots: the snapshotData
// of the WebKit inspector's Heap.snapshot, as JSC's HeapSnapshotBuilder
// writes it.
//
// The format is one JSON object:
//
//	{"version": 3, "type": "Inspector",
//	 "nodes": [id, size, classNameIndex, flags, ...],
//	 "nodeClassNames": ["<root>", "string", "Structure", ...],
//	 "edges": [fromId, toId, edgeTypeIndex, edgeData, ...],
//	 "edgeTypes": ["Internal", "Property", "Index", "Variable"],
//	 "edgeNames": ["propertyName", ...]}
//
// Each node is four integers:
//
//   - id: the cell's identifier, given when a snapshot first sees the cell
//     and kept by later snapshots while the cell lives, so two snapshots
//     can be compared by id. Node 0 is the synthetic "<root>": id 0, class
//     index 0, size 0. Real cells count from 1.
//   - size: the cell's estimatedSizeInBytes: the cell plus what JSC
//     estimates it owns outside the GC heap (an ArrayBuffer's contents),
//     JSC's counterpart of V8's self_size.
//   - classNameIndex: an index into nodeClassNames. A name is the cell's
//     ClassInfo name ("string", "Structure", "FunctionExecutable",
//     "Function", "Array", "Window", "HTMLDivElement"), except for cells of
//     JSObject's own ClassInfo ("Object"), which JSC names after their
//     constructor ("Foo" for new Foo()) unless they have an own
//     "constructor" property, as prototypes do. WebCore may also rename
//     custom elements' wrappers after their constructor.
//   - flags: a bit set (Flags). Internal marks cells whose Structure
//     belongs to no realm (global object): Structures, executables and code
//     blocks, symbols, property tables, getter/setter pairs, JSC's own
//     bookkeeping, none of which JavaScript can hold. Strings and BigInts
//     are exempt from that test and never flagged. ObjectSubtype marks the
//     cells named after their constructor. ElementSubtype (version 3) marks
//     wrappers of DOM nodes (WebCore's JSNode), documents included.
//
// Version 1 had a 0/1 "internal" field where flags are; version 2 made it a
// bit set (Internal, ObjectSubtype) and later gained "type"; version 3, the
// current one, has ElementSubtype too. The layout is the same, so Read
// accepts all three. The other type, "GCDebugging" (JSC's GC heap
// debugger, not the inspector), has seven fields per node, two of them
// address strings, and "roots" and "labels" tables; Read rejects it.
//
// Edges, sorted by fromId, name nodes by id: [fromId, toId, typeIndex,
// data], where data indexes "edgeNames" for Property and Variable edges
// and is the index of an Index edge. Read checks their shape but keeps
// only their number: a census needs none, and a comparison of two
// snapshots needs only the node ids. ReadGraph keeps them too, resolved
// to node ordinals (Snapshot.Edges), for what follows references (the
// leak check's retainer paths).
//
// Read keeps one column per node field, 21 bytes a node. It decodes with
// encoding/json, which holds one top-level member's JSON at a time (the
// nodes or the edges array), so peak memory is that text plus the columns.
package jscsnapshot
