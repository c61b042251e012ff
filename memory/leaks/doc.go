// Package leaks owns wdext's leak check verdict: given a heap before a
// scenario ran N times and the heap after (both V8 heap snapshots read by
// memory/heapsnapshot, or JavaScriptCore's through FromJSC, after a full
// GC), and the event listeners an
// engine counted at both ends, Find says what leaks, who holds it and
// where it was made (wire.LeakReport). Of the heap before (and of
// memlab's target), it needs only a Summary (Summarize: the heap object
// ids and the collections' sizes, at most 4 bytes a node: about 0.4 for
// V8's dense ids, kept as a bitmap), so that one snapshot
// at a time is in memory. It is pure Go and knows nothing of
// browsers; package memory/leakcheck serves it as WebDriver commands and
// `wdext leaks` on saved snapshots.
//
// It combines memlab's and fuite's methods:
//
//   - New objects are told by V8 heap object id, which is stable across
//     the snapshots of one isolate: new = an id the baseline lacks and the
//     final snapshot has (alive after the GC). With memlab's optional
//     target snapshot, new must also be in the target (allocated by the
//     action, still alive once it was undone).
//   - The groups (wire.Leak kinds): "objects", new V8 "object" nodes by
//     constructor name (V8's own "system / …" objects, globals and
//     prototypes "… / url", and functions are left out: a closure is
//     made each time a function expression runs, and what holds it is the
//     leak); "detached-dom", new nodes whose V8 detachedness is 2
//     (detached), named after their wrapper's prototype and a selector
//     from the tag Blink shows, "HTMLDivElement div.dialog" for
//     <div class="dialog">; "collection", an Array, Map, Set or plain
//     Object present in both snapshots whose entries grew, named after its
//     holder, "Window.cache (Map)"; "event-listeners", the engine's counts
//     by target and type, "Window resize".
//   - fuite's rule: a group is reported only when it grew by at least N
//     and by a multiple of N, so that one-time initialisation (a lazily
//     made singleton), caches overwritten in place and garbage never
//     appear. perIteration is countDelta / N.
//   - A collection that lies on the retainer path of a reported objects
//     or detached-dom group grows because of that group, and is not
//     reported again (the array that holds the leaked Foo).
//   - retainerPath is the shortest path to the group's representative
//     (the member the search reaches first, so one nearest the roots) over
//     strong edges: breadth first from the page's global objects (Window;
//     in a worker's heap, its DedicatedWorkerGlobalScope) over the edges a developer would follow (no weak edges, no
//     synthetic shortcuts, no hidden edges, no __proto__ links, nothing
//     through hidden classes or code), as memlab and DevTools prefer
//     paths from the page; what that does not reach, from V8's root over
//     any strong edge; nothing, an empty path. It alternates nodes and
//     edges: ["Window", "store (property)", "Array", "[20] (element)",
//     "Foo"]; closure variables are "name (variable)"; a path of more
//     than 64 nodes keeps its 32 first and last, "… (N more)" between.
//     Event listeners have an empty path: their target is their holder.
//   - createdFrom is the youngest frame of the allocation stack V8's
//     allocation tracker recorded (Snapshot.Stack of the node's
//     trace_node_id), the one most members share (the tracker now and
//     then loses the stack of an object a GC moves); for event listeners,
//     that of their handlers, by heap object id. V8 records functions,
//     not call sites: line and column are the function's. Null when no
//     member has a stack (allocated before the start, or offline
//     snapshots taken without allocation tracking).
//   - Counting entries: an Array counts its element edges, an Object its
//     properties, a Map or Set the entries of its hash table that V8
//     shows, those with a key or value other than a small integer (V8's
//     snapshots leave small integers out: a Map from small integers to
//     small integers looks empty). bytesDelta is the group's self sizes
//     (for a collection, the growth of its backing store).
//   - Order: by kind (objects, detached-dom, collection, event-listeners),
//     then bytes and count, largest first, then name.
//
// JavaScriptCore's heap snapshots (package memory/jscsnapshot, read with
// their edges) go through FromJSC, which writes them in V8's vocabulary,
// so the same rules apply, with what JSC lacks told by the engine: the
// sizes of Maps and Sets (Entries: JSC shows no edges to their entries),
// and which DOM nodes are detached (JSC has no detachedness). JSC keeps no
// allocation stacks: createdFrom is null. Two differences, measured on
// WebKitGTK 2.50.6, each of which made a page without leaks report one
// in about 1 run of 10: JSC's collector scans stacks conservatively, so
// garbage that a stale stack word keeps can outlive the final collection
// (PageOnly: only what a path from the page's globals reaches counts, so
// an object only an engine-internal cell holds, a promise reaction say,
// is not counted there); and JSC makes the prototypes of built-in
// constructors on first use (a first exception makes TypeError's), which
// FromJSC names "(prototype)", a name no group counts.
package leaks
