// Package leaks owns wdext's leak check verdict: given a heap before a
// scenario ran N times and the heap after (both V8 heap snapshots read by
// memory/heapsnapshot, or JavaScriptCore's through FromJSC, after a full
// GC), and the event listeners an engine counted at both ends, Find says
// what leaks, who holds it and where it was made (wire.LeakReport). It is
// pure Go and knows nothing of browsers; package memory/leakcheck serves
// it as WebDriver commands, and `wdext leaks` runs it on saved snapshots
// (with memlab's three-snapshot method, "new" must also be in the target
// snapshot, taken after the action and before it was undone).
//
// Rules (memlab's and fuite's methods):
//
//   - Of the heap before (and of memlab's target) only a Summary is kept
//     (Summarize: heap object ids and collection sizes, at most 4 bytes a
//     node), so that one whole snapshot at a time is in memory.
//   - New objects are told by heap object id, stable across the snapshots
//     of one isolate: an id the baseline lacks and the final snapshot has.
//   - Groups (wire.Leak kinds): "objects", new objects by constructor name
//     (engine internals, globals, prototypes and functions left out);
//     "detached-dom", new DOM nodes the engine marks detached, named by
//     wrapper and selector ("HTMLDivElement div.dialog"); "collection", an
//     Array, Map, Set or plain Object present at both ends whose entries
//     grew, named by its holder ("Window.cache (Map)"); "event-listeners",
//     the engine's counts by target and type ("Window resize"); "timers",
//     Blink's pending timers counted by callback ("poll()": see
//     timerLeaks).
//   - What only the WebDriver machinery holds (V8's "DevTools console"
//     global handles, chromedriver's ret_nodes, se_exportedFunctionSymbol
//     and cdc_ globals) is never a leak: see driver. A WeakMap's value is
//     held by its key's edge only (ephemeronValue). Nor is what no strong
//     path from the engine's root reaches (engineHeld: V8's allocation
//     sites' literal boilerplates).
//   - Clusters: an objects or detached-dom group splits by its members'
//     retainer path shapes (see paths.shape), each judged on its own; the
//     members of those that did not grow are pooled and judged once more
//     (see clusters).
//   - A new detached node inside another is its root's (detachedRoot),
//     and a group whose every member another group's members dominate is
//     that group's leak (withoutRetained; listener and timer groups stay).
//   - fuite's rule: a group is reported only when it grew by at least N
//     and by a multiple of N, so one-time initialisation, caches
//     overwritten in place and garbage never appear. perIteration is
//     countDelta / N. A collection on the retainer path of a reported
//     group grows because of it and is not reported again.
//   - With memlab's rules (Input.MemlabRules: one iteration's snapshots,
//     offline), only detached DOM nodes and unmounted React fibers are
//     leaks, as memlab find-leaks' default filter says (memlabRules).
//   - Growth, not churn: with an allocation clock (Input.Clock), an
//     objects or detached-dom group must have been made across the
//     iterations, in bursts of k, not in one stretch at the end (a
//     structure re-made each iteration): see growth.
//   - retainerPath is the shortest path over strong edges to the group's
//     representative, from the page's global objects (Window; a worker's
//     DedicatedWorkerGlobalScope) over the edges a developer would follow,
//     else from the engine's root; it alternates nodes and edges, and a
//     path of more than 64 nodes keeps its 32 first and last.
//   - createdFrom is the youngest frame of page script (one with a
//     script URL: not "(V8 API)", not the driver's scripts) of the
//     allocation stack that more than half of the members with a stack
//     share (a function's position, not the call's), else the page frame
//     of most of the new bytes they dominate; null when neither has a
//     majority (V8 loses or replaces the stack of an object a GC moves
//     once it has an id: see createdFrom).
//   - retainedBytes is what the new members retain in the final heap's
//     dominator tree (see retained), retainedPerIteration that / N; a
//     listener group's is its new handlers' (for an engine that names
//     none, the new functions the window's wrapper holds: unnamedHandlers),
//     and its path leads to one.
//   - Order: by kind, then bytes and count, largest first, then name.
//   - For JavaScriptCore, FromJSC writes the snapshot in V8's vocabulary
//     so the same rules apply; what JSC does not say (Map and Set sizes,
//     detachedness) the engine tells (Entries), and PageOnly counts only
//     what the page's globals reach (JSC scans stacks conservatively).
//
// Each rule in detail, what V8 and JavaScriptCore show and hide, and
// what was measured: docs/leaks.md.
package leaks
