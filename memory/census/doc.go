// Package census takes censuses of V8 and JavaScriptCore heap snapshots in
// the vocabulary of SpiderMonkey's Debugger.Memory.takeCensus (its
// documentation, docs/Debugger/Debugger.Memory.md in mozilla-central): the
// same breakdown language, the same defaults, the same result shapes, with
// V8's node types and JSC's classes standing in for SpiderMonkey's types.
//
// Parse reads a breakdown (Count, CoarseType, ObjectClass, InternalType,
// AllocationStack, or List for an array); Take counts a Heap with it. V8
// adapts a *heapsnapshot.Snapshot, JSC a *jscsnapshot.Snapshot, and
// ReadHeap (behind RunFile, `wdext census`) reads either, telling them
// apart by their first JSON member.
//
// Rules:
//
//   - The defaults are the documented ones (Default() when there is no
//     breakdown; counts and bytes on; a missing part of coarseType, "then"
//     or "other" is a full count); allocationStack's "noStack", which the
//     documentation does not cover, defaults as SpiderMonkey's
//     implementation does.
//   - Parse is stricter than SpiderMonkey: a property a breakdown does not
//     take (a typo, SpiderMonkey's undocumented "label", "domNode",
//     "bucket", "filename", "descriptiveType"), a non-boolean flag, a null
//     where a breakdown belongs and more than MaxParts breakdowns are
//     errors. An error is an *Error whose Path names the bad part
//     ("breakdown.then.by"); the server answers it as "invalid argument".
//   - Every node of the snapshot is counted except the roots (V8's
//     synthetic nodes, JSC's "<root>"): both engines collect garbage
//     before a snapshot, so the nodes are the live heap. "bytes" is a
//     node's self size (V8) or estimated size (JSC).
//   - Each engine's types map onto SpiderMonkey's coarse types in one
//     place (the Heap's node kinds): V8's "array" nodes are backing
//     stores, counted as other, not objects; JavaScript arrays are
//     objects of class "Array". JSC records no allocation sites: its
//     allocationStack census has the "noStack" entry only.
//   - Results marshal to takeCensus's JSON. allocationStack, a Map keyed
//     by SavedFrame in SpiderMonkey, is an array of StackEntry ({"stack":
//     frames youngest first, "census"}), in the order stacks were first
//     seen, ending with the "noStack" entry, always present.
//
// The mapping of V8's node types and JSC's classes, item by item, with
// the documentation's words for each default: docs/census.md.
package census
