// Package chromium is wdext's engine for Chromium sessions: those whose
// driver (chromedriver, or a grid in front of one) announces a CDP
// endpoint, goog:chromeOptions.debuggerAddress. Bind makes an Engine per
// session; it dials the browser's DevTools endpoint on first use (again
// when the connection broke) and serves every capability of package
// engine through it, with the client in package cdp beneath. Defaults are
// what a managed chromedriver's sessions need on this machine.
//
// An endpoint that does not answer is judged with the driver's help (GET
// /session/{id}/window): the driver's error, when it has one, is the
// answer (chromedriver's "invalid session id" once the browser exited,
// "no such window"); else an endpoint that answered before is a plain
// failure ("no longer answers (did the browser exit?)"), and one never
// reached (a grid node's loopback address) is "unsupported operation".
// A connection that breaks under a command is judged the same way, the
// driver being given up to 2 s to notice. A command under way when the
// session ends (Delete Session closes the engine and its connection) is
// "invalid session id".
//
// The browser runs one tracing session at a time; its one owner on a
// connection is cdp.Browser.LockTracing: forcesample takes it for about
// 8 ms per call, the GC log for as long as it collects (and a
// forcesample meanwhile is "unsupported operation" naming the GC log).
//
// # Force Sample
//
// On Chromium the samples are the browser's own. With the tracing
// category devtools.timeline enabled, Blink asks V8 for a sample
// (v8::CpuProfiler::CollectSample, which every profiler of the isolate
// obeys) for two kinds of trace event: FunctionCall, whenever Blink calls
// a JS function (a timer, a listener, a callback), and TimeStamp
// (console.timeStamp). With disabled-by-default-devtools.timeline.stack
// enabled too, every event that records a JS stack samples as well:
// Paint, Layout, UpdateLayoutTree, ParseHTML, TimerInstall, an
// EventDispatch even with no listener, and more.
//
// A force, one per browser at a time:
//
//  1. finds the isolates (Runtime.getIsolateId in every page and frame,
//     under the page-state check): one target per isolate (top documents,
//     out-of-process iframes, other windows);
//  2. when one of them is new to it, traces once with a category no event
//     has (a warm-up: a renderer's first Tracing.start needs its main
//     thread, and did not complete with the main thread of a page just
//     loaded in a new renderer paused: 10 of 40 fresh pages; 0 of 40
//     after a warm-up);
//  3. pauses each isolate's main thread in the V8 debugger, at a debugger
//     statement it evaluates in an isolated world of the target's
//     document (made once per document, and kept). While paused, the
//     renderer runs the DevTools commands sent to it and no task of any
//     page of the process: no timer, event, message or animation frame
//     callback calls into V8. Pauses are skipped again
//     (Debugger.setSkipAllPauses) as soon as the isolate is held, which
//     does not end the pause it is in;
//  4. arms devtools.timeline alone, browser-wide (Tracing.start with a
//     Perfetto config of Chromium's trace event data source alone, the
//     trace returned as a protobuf stream: forcesample_trace.go);
//  5. runs console.timeStamp in each isolate's isolated world: one
//     TimeStamp event, one sample in every started profiler there (the
//     page's globals cannot replace that console);
//  6. disarms (Tracing.end) and waits for tracingComplete: the category
//     is then off in every renderer (measured: a console.timeStamp
//     evaluated right after takes no sample);
//  7. resumes the isolates, which then run what queued up meanwhile,
//     while it reads the trace: the triggers, and any other event that
//     took a sample on their threads (ForceReport's Samples, Strays).
//
// Measured medians, 4 isolates: the command's round trip 13–14 ms (p99
// 20–21 ms) with the machine's load average at 1–3.5, 18–19 ms at 4–6
// (forcesample's BenchmarkForceSample, 1,000 calls; before these
// changes, in the same sittings: 25 ms, and 25–31 ms); on
// TestForceSampleExact's busy page 15–20 ms at load 5–8, the armed
// window (Tracing.start sent to tracingComplete) 7.5–9.5 ms and each
// page's main thread paused for 13–17.5 ms of it, as in a task that
// long; plus one warm-up trace on a renderer's first force. Of a force,
// at load 6–9: finding the isolates 1.5 ms, pausing them 3–3.5 ms,
// Tracing.start 3.5 ms, the triggers 2 ms, Tracing.end to
// tracingComplete 2.5 ms, resuming (the trace read meanwhile) 1.5–2 ms.
// Before (a traceConfig, the trace as JSON events, each step in turn) a
// force took 25–27 ms at that load, the armed window 16–17 ms:
// Tracing.start 5.5–7 ms and Tracing.end to tracingComplete 9.5–11 ms,
// the isolated world made and the skip undone at every force.
//
// Why so, measured on Chromium 156 by reading the trace of the armed
// window (every event that took a sample carries a sampleTraceId):
//   - A Tracing.start with a traceConfig has Chromium add its own data
//     sources (trace metadata and more) and, once tracing has stopped,
//     convert the trace to JSON with Perfetto's trace processor. Measured
//     in one sitting (load 5–8, 150 forces each): Tracing.start 5.9–6.8 ms
//     and Tracing.end to tracingComplete 9.8–10.9 ms with a traceConfig;
//     3.3–4 ms and 7.4–8 ms with a Perfetto config of Chromium's trace
//     event source alone (the same Chrome trace config inside), the
//     trace still as JSON; 2.9 ms and 2.3 ms with that config and the
//     trace as a protobuf stream, which wdext reads itself (an 8 KB
//     stream, two IO.read calls, while the isolates resume). The
//     triggers and strays are the same (1,000 calls, 0 strays). Turning
//     off Perfetto's built-in data sources (clock snapshots, system info)
//     changed nothing measurable; so did keeping the trace event source
//     to the renderer processes (producer_name_filter).
//   - Arming the stack category (as wdext did before) samples rendering:
//     the first frame of a page just loaded (EventDispatch pagereveal,
//     Paint) fell in a force's window in 4 of 880 windows of 40 runs of
//     the bundled suite, which is how "five forced samples" got 7. On a
//     page with 50 timers, 30 forces gave 999 samples (TimerInstall,
//     FunctionCall, Layout, Paint, RequestAnimationFrame).
//   - Without it, but without a pause, every callback Blink runs samples
//     (FunctionCall): 1,445 samples for 30 forces on that page.
//   - A pause requested with Debugger.pause lands in whatever script runs
//     next, on a busy page its hot (optimized) callback: V8 deoptimizes
//     the frame to break there, and V8's profiler takes a sample at every
//     deoptimization (ProfilerEventsProcessor::AddDeoptStack), one more
//     in 5 % of forces. The force's own debugger statement runs no page
//     code.
//   - Debugger.enable reports every script of the isolate, the force's
//     own evaluations among them until V8 collects them: enabled at every
//     force, it went from 3 ms to 75 ms over 300 forces. The debugger a
//     force turns on stays on for a second after it (with every pause
//     skipped in between: the page's own debugger statements and
//     exceptions do not stop it), then goes off.
//
// The tests (forcesample's TestForceSampleExact, wpt's
// TestBundledProfilingLoop) count 1,000 calls of 1,000 in four
// profilers, with a page running 50 timers, an animation frame loop,
// message handlers and a resizing animation, and an execute/async
// script outstanding in another window; and 200 rounds of the bundled
// js-self-profiling tests with no unexpected result.
//
// A target that does not answer would hold its pause and Tracing.start
// too, so it fails the force within about 3 s with its state ("timeout"
// for a busy one, "unexpected alert open"). Crashed targets have no
// profilers left and are skipped, but for the session's current window,
// whose crash is the answer ("tab crashed"). A Tracing.start still
// unanswered after 2 s (it takes milliseconds) has the targets checked
// again, for one that stopped answering since. An isolate already paused
// by another debugger (a breakpoint) is sampled as it is and stays
// paused. DevTools clients with the Debugger domain on see each force's
// Debugger.paused and resumed.
//
// Limits of Chromium 156, measured (see the tests):
//   - Of several started Profilers in one isolate (one document, or
//     same-process frames), only the most recently started one receives
//     forced samples; each profiler in its own process gets exactly one.
//   - A Profiler left running by a document that navigated away (the
//     page navigated itself, so the process and its isolate stay) leaves
//     the later Profilers of that isolate without any sample, not even
//     the one at construction, forced or not; stopped before the
//     navigation, it does not (forcesample's
//     TestForceSampleAfterSameProcessNavigation). A navigation by
//     WebDriver (Navigate To) gets a new process in Chromium 156, so it
//     is not affected.
//   - A profile also holds the samples V8 takes by itself, which are not
//     forced and which wdext cannot prevent from outside: one when a
//     profiler starts (and when another one starts in the isolate),
//     sometimes one at stop(), one per sampleInterval, and one at every
//     deoptimization of the isolate's code (measured: a page's polling
//     function, optimized after a few seconds, deoptimized when its
//     answer changed, one sample). Forced samples counted between two
//     marks are exact when the interval is longer than the span and the
//     page's code does not deoptimize in it.
//   - Tracing.start sometimes answers only after about 10 s, while every
//     page and frame answers at once: measured in the first force on a
//     page just loaded in a new process (its warm-up trace), 6 forces of
//     4,380 with the machine's load average at 6–7, none of 4,400 at 4–5
//     (wpt's TestBundledProfilingLoop, which logs each phase of a slow
//     force); two of them answered at 10.02 s. The command waits up to
//     30 s (package forcesample), so such a force is slow, not failed.
//     With the Perfetto config (below "Force Sample"), 6 of 4,400 at load
//     5–7, and 3 of 4,400 at load 11 with 3 of 4,400 for the traceConfig
//     in the same sitting. A profiler whose sampleInterval is 10 s takes
//     its periodic sample during such a force: when the stall hits the
//     first of the bundled force-sample-count.html's five forces, the
//     count is 6: once or twice in each of three runs of 200 rounds at
//     load 5–11 (the traceConfig's run in the same sitting had its three
//     stalls on other pages); the extra sample's timestamp was the
//     interval's, 9.99 s after the profiler's start, inside the 10 s
//     force.
//   - A page-side synchronous force (WPT RFC 81) cannot be built exactly
//     on this mechanism: a browser-level Tracing.start does not complete
//     while the page blocks in a synchronous call, and the trigger's
//     sample, taken in an isolated world, has none of the page's frames.
//
// # Measure Memory
//
// MeasureMemory and CollectGarbage: see package memory for the commands;
// here source "api" runs the page's own measureUserAgentSpecificMemory()
// and forces the garbage collections it waits for (measureAPI), and source
// "engine" reads per-isolate heap usage, frame trees, frame owners and
// worker targets over CDP and runs the spec's algorithms (memory.EngineHeaps).
//
// # Debugger.Memory
//
// How the commands of package memory/debuggermemory are served on Chromium.
//
// # Which target
//
// Every command but the GC log works on the page of the session's current
// window. Extension commands don't see the client's window switches, so
// each command asks the upstream driver (GET /session/{id}/window, bounded
// to 5 s: chromedriver runs one command of a session at a time, and one
// waiting for a busy page holds it; then "timeout") and takes the page
// target whose CDP target id is that handle (chromedriver's handles are
// target ids). The driver's own error ("no such window") is passed on. A
// handle of that form that no page target has, or a browser with no page,
// is "no such window" (the window was closed). With a driver whose handles
// are not target ids, a browser with one page is still unambiguous; with
// several the command is "unsupported operation". A page target is its
// renderer's main V8 isolate: same-site frames, and other same-site
// windows sharing the process, are in the same heap. wdext talks to the
// target over its own flat CDP session (not the one other extensions
// share), because heap snapshots arrive as events of the session that
// asked for them.
//
// # Page state
//
// Measured on Chromium 156: while a page's main thread runs a script (a
// for(;;) loop started by a timer), waits in alert()/confirm(), or its
// renderer has crashed (chrome://crash, a killed renderer), every command
// its renderer answers waits without end: Runtime.evaluate,
// Runtime.getIsolateId, HeapProfiler.takeHeapSnapshot, startSampling,
// startTrackingHeapObjects, Page.enable, even Debugger.pause; so does a
// browser-wide Tracing.start (forcesample, the GC log). The browser's own
// commands answer: Target.*, SystemInfo.getProcessInfo, Inspector.enable.
// Unchecked, a census, the allocation log and live objects waited for the
// server's 2-minute deadline, measure and gc for their 10 s, forcesample
// for 10 s on Tracing.start. chromedriver answers GET /window at once in
// every state, GET /alert/text at once with a prompt open but only once a
// busy page is free again, and "tab crashed" (HTTP 500) to commands on a
// crashed tab.
//
// So every command first checks that the targets it uses answer, and each
// long call runs under a watch (pagestate.go):
//
//   - A quick call that a free main thread answers at once (Runtime.evaluate
//     "1" before a heap snapshot or a profiler start or stop;
//     Runtime.getIsolateId where a command names the isolates) gets 2 s.
//     Meanwhile Inspector.enable is sent, which the browser answers itself,
//     preceded by Inspector.targetCrashed when the renderer is gone: a
//     crash is known at once, every time.
//   - A target that does not answer is then looked at: a renderer process
//     of the browser that uses at least 40 % of a CPU over 1 s means a
//     script is running ("timeout": "the page …: its main thread is busy:
//     a script has been running for more than 3 s"); the renderer of a
//     page in a loop keeps a whole CPU, an idle or blocked one next to
//     nothing. Only a page that runs no script is asked about of the
//     driver: with a user prompt open in the current window, GET
//     /alert/text gives its text ("unexpected alert open", naming it);
//     else "timeout" ("… runs no script: its main thread is blocked").
//     The renderer of a target is not known, so a busy renderer of
//     another tab makes a blocked page read as busy.
//   - A crashed page is "tab crashed", chromedriver's code for it (not a
//     W3C one); a crashed or vanished frame or worker is an error of its
//     own entry (census "all") or is left out (measure, gc, forcesample).
//   - While a long call runs (a census of a big heap legitimately takes
//     tens of seconds, and keeps the command's deadline),
//     Inspector.targetCrashed or Inspector.detached for its session ends
//     it at once: "tab crashed", or "no such window" for a page that was
//     closed.
//
// A busy, blocked or crashed target keeps wdext's session to it (it may
// recover, or reload); after other failures the session is dropped and
// the next command attaches anew.
//
// # Census
//
// POST /session/{id}/wdext/memory/census {"breakdown": …, "targets": "page"|"all"}
// returns takeCensus's result for the breakdown (absent: the documented
// default; see package memory/census for the language, the defaults, the
// V8 node type mapping and the result shapes). An invalid breakdown is
// "invalid argument" naming the bad part ("invalid breakdown at
// breakdown.then.by: …"), as are unknown "targets" values.
//
// The census is of a V8 heap snapshot (HeapProfiler.takeHeapSnapshot, no
// progress events, no numeric values, no internals), parsed by
// memory/heapsnapshot while it streams in: the addHeapSnapshotChunk events
// are written into a pipe that the reader consumes concurrently, so the
// JSON is never held whole: what is kept is the parsed columns, less than
// the JSON (the benchmark measures 1.5–1.6× the snapshot's size as the
// peak RSS of a whole `wdext census` process). Garbage is not collected separately: V8 collects all
// garbage before it snapshots, so the census counts live cells, as
// SpiderMonkey's does.
//
// With "targets": "all" the reply is {"targets": [{"type", "url",
// "targetId", "census", "error"}, …]}: the page, then the targets below it (by
// CDP parentId) that have their own isolate: out-of-process iframes and
// dedicated workers, nested ones included. Targets sharing an isolate
// (two frames of one site) are counted once, under the first. A frame or
// worker that went away meanwhile, or whose snapshot failed, has a null
// census and an "error"; a failure on the page fails the command. The
// censuses are not merged: they are separate heaps, and a sum of classes
// across realms of different sites is rarely what one wants (a client can
// add them up). Service and shared workers are not the page's and are not
// included.
//
// # Allocation log
//
// POST /session/{id}/wdext/memory/allocations {"trackingAllocationSites",
// "allocationSamplingProbability", "maxAllocationsLogLength"} sets the
// accessors (omitted ones keep their value; defaults false, 1 and 5000)
// and returns them with "allocationsLogOverflowed" and V8's
// "samplingInterval". A probability outside [0, 1] (SpiderMonkey's
// RangeError), a maxAllocationsLogLength that is not an integer from 1 to
// MaxAllocationsLogLength, and unknown parameters are "invalid argument".
// POST …/allocations/drain returns {"log": [entry, …], "overflowed"} and
// empties the log. Draining while trackingAllocationSites is false is an
// error, as drainAllocationsLog throws an Error then: the request is fine
// but the session's state forbids it, which is "unsupported operation"
// ("invalid argument" would blame the parameters, which it takes none of).
//
// The log is V8's sampling heap profiler (HeapProfiler.startSampling)
// with includeObjectsCollectedByMajorGC and …MinorGC, so allocations that
// died since are still logged. The alternative, the allocation tracker
// (startTrackingHeapObjects with trackAllocations), was measured and is
// not a log: it gives per-stack totals and the stacks of objects still
// alive in a snapshot, never individual allocations of objects already
// collected (it serves the live objects commands instead). V8 hands
// samples out only by stopping the profiler (getSamplingProfile repeats
// every sample since the start), so a drain stops and restarts it:
// allocations during that one CDP round trip are missed. Tracking starts
// on the current page and stays there until turned off; turning it off
// discards what was not drained. A navigation that changes the renderer
// restarts V8's profiler and loses the samples not yet drained.
//
// allocationSamplingProbability → samplingInterval: V8 samples bytes, not
// objects, as a Poisson process: an object of s bytes is sampled with
// probability 1-exp(-s/interval). The interval is the one that samples a
// 32-byte object (a small V8 object) with probability p: interval =
// round(-32 / ln(1-p)), at least 1 byte. Probability 1 is interval 1,
// which samples every allocation (V8 then samples at least every 4
// bytes); 0 samples nothing (tracking is on, the log stays empty); 0.05 is
// 624 bytes. Larger objects are sampled more often than p, smaller ones
// less, as in any byte-based sampler.
//
// Entry fields, from V8's samples ({size, nodeId, ordinal}) and its tree
// of allocation stacks:
//
//   - timestamp: null. V8 records no time for a sample; entries are in
//     allocation order (by V8's time-ordered sample ordinal) instead.
//   - frame: the youngest JavaScript frame, as a SavedFrame-like object
//     {functionDisplayName, source, sourceId, line, column} (1-based line
//     and column, CDP's are 0-based); null when no JavaScript was running
//     (V8's "(V8 API)", "(BYTECODE_COMPILER)", "(GC)" … pseudo-frames).
//     V8 places a frame at the start of its function, not at the
//     allocating statement. Builtins ("push") are frames.
//   - stack: the whole stack, youngest first (SavedFrame would chain the
//     frames by "parent"). Not in the documented shape; added because
//     frame alone rarely says enough.
//   - class, constructor: null. V8's sampler records where, not what: it
//     samples before the object is initialised and keeps no type. (With
//     `new Foo`, V8 allocates the object in the caller's frame, so not
//     even the stack names the constructor reliably.) The live objects
//     commands and an objectClass census give classes, for survivors.
//   - size: the object's size in bytes. V8 reports size × n, n being the
//     number of allocations the sample stands for, round(1/(1-exp(-size/
//     interval))); wdext recovers the size when exactly one multiple of 4
//     is consistent with the report: always at probability 1 (n is 1),
//     for most sizes at moderate intervals, and null when small objects
//     are ambiguous at large intervals (24 and 28 bytes both report 1008
//     at interval 1000).
//   - sampledBytes: V8's reported size × n, the bytes the sample stands
//     for. Not in the documented shape; sum it to estimate allocation.
//   - inNursery: null. V8 allocates in its young generation unless
//     allocation-site feedback pretenures, and the sampler doesn't say
//     which happened.
//
// maxAllocationsLogLength keeps the newest entries, as documented ("the
// maxAllocationsLogLength most recent Object allocations since the last
// call"), and "overflowed" is true when more were logged since the last
// drain. V8 itself keeps every sample until the drain: drain often at
// high probabilities.
//
// # GC log
//
// POST /session/{id}/wdext/memory/gc-log {"collect": true|false} starts
// or stops collecting and returns {"collecting"}; GET …/gc-log
// returns {"collecting",
// "entries": [entry, …], "dataLossOccurred", "stopped"} and forgets the
// entries it returned (a drain: each collection is reported once, as
// onGarbageCollection fires once).
//
// No CDP domain reports GCs; tracing does. Collecting is a browser-wide
// Tracing session with the one category "disabled-by-default-v8.gc"
// (V8's GC scopes and its per-GC summary; "v8" and "devtools.timeline"
// would add every script task's events and are not needed), recording
// continuously into a 32 MB buffer. Chromium delivers trace events only
// when tracing ends, so reading while collecting ends tracing and starts
// it again at once: collections in that gap (tens of milliseconds) are
// missed. A cycle whose incremental steps were read but whose final pause
// was not yet is held back until the next read. A full buffer or a lost
// connection sets dataLossOccurred; "stopped" says why collecting stopped
// if it did so on its own.
//
// The browser has one tracing session, owned through
// cdp.Browser.LockTracing. While the GC log collects, forcesample (which
// arms tracing for each force) answers "unsupported operation" ("… but the
// GC log holds it"); starting to collect while a forcesample holds tracing
// waits up to 6 s (an arm holds it for milliseconds, and a late trace
// flush up to 30 s more), then is "unsupported operation" too, as it is at
// once when another client (chromedriver's performance log with
// perfLoggingPrefs.traceCategories, DevTools) traces. No events are
// dropped silently.
//
// Entries are one per GC cycle of each V8 isolate in the browser (pages,
// frames, workers, and Chromium's own WebUI renderers: Process and Thread
// tell them apart), oldest first:
//
//   - collections: [{startTimestamp, endTimestamp}, …], the cycle's
//     pauses on the isolate's thread, in milliseconds of the trace clock
//     (ts/1000; monotonic, not performance.now()): for a major GC the
//     incremental marking steps (V8.GC_MC_INCREMENTAL_START,
//     V8.GC_MC_INCREMENTAL, …_FINALIZE) then the atomic pause
//     (V8.GC_MARK_COMPACTOR); for a minor GC its one pause
//     (V8.GC_SCAVENGER or V8.GC_MINOR_MARK_SWEEPER). Concurrent and
//     parallel GC work on other threads is not a pause and is not listed.
//   - reason: the "reason" of V8.GCTraceGCNVP, V8's summary written right
//     after the final pause: V8's GarbageCollectionReason ("allocation
//     failure", "low memory notification" for HeapProfiler.collectGarbage,
//     "idle task", "testing", …). null if the summary was not recorded
//     (tracing ended between the pause and the summary).
//   - nonincrementalReason: for a major GC done all at once
//     (is_incremental false in the summary), V8's "collector_reason" (why
//     it collected the whole heap, e.g. "GC in old space requested"), or
//     reason when that is empty; null for incremental major GCs and for
//     minor GCs, which are never incremental.
//   - gcCycleNumber: V8's GC epoch (the scopes' args.epoch), increasing
//     per isolate and shared by minor and major GCs. Cycles are keyed by
//     (pid, tid, epoch).
//   - collector: "scavenger", "minor-mark-sweeper" or "mark-compactor".
//     SpiderMonkey reports only major GCs to onGarbageCollection; minor
//     ones are included here, filter on collector to match.
//   - pid, tid, process, thread: the isolate's process and thread, with
//     their names from the trace's metadata ("Renderer", "WebUI Top
//     Renderer"; "CrRendererMain", "DedicatedWorker thread").
//   - heapBytesBefore, heapBytesAfter: the summary's start_object_size and
//     end_object_size.
//
// # Live objects
//
// POST /session/{id}/wdext/memory/live-objects/start starts V8's
// allocation tracker in the current page
// (HeapProfiler.startTrackingHeapObjects with trackAllocations), which
// records the stack of every allocation from then on. POST
// …/live-objects/stop stops it (stopTrackingHeapObjects takes a heap
// snapshot, after a GC, while the tracker still runs; it is streamed like
// a census's) and returns {"liveObjects": [{"createdFrom": [frames],
// "class", "count", "instanceSize"}, …], "count", "instanceSize"}: the
// objects allocated in between that are still alive, grouped by creation
// site and class, largest instanceSize first. Starting twice, or stopping
// what was not started, is "unsupported operation".
//
// Mapping, after WebKit's ObjectInformation (id, type name, size,
// createdFrom), grouped:
//
//   - createdFrom: the allocation stack of the snapshot node's
//     trace_node_id (heapsnapshot.Snapshot.Stack), youngest frame first;
//     [] for objects allocated with no JavaScript running.
//   - class: heapsnapshot.Snapshot.ClassName (the constructor name for
//     objects, "Function", "RegExp"), or the V8 node type in parentheses
//     for everything else: "(string)", "(array)" (backing stores),
//     "(code)", "(hidden)", …
//   - count, instanceSize: the group's number of nodes and the sum of
//     their self sizes in bytes (WebKit's instanceSize was per object).
//
// "Allocated since start" is "has a trace": V8's tracker knows only the
// allocations it saw, so objects from before the start have
// trace_node_id 0. Heap object ids would not do: V8 assigns them lazily
// (when a snapshot or a heap stats update first sees the object; a fresh
// object's getHeapObjectId is 0), so the last id seen at the start does
// not separate before from after. While the tracker runs, censuses by
// allocationStack have stacks too.
//
// Measured limit of Chromium 156's V8: now and then the tracker loses the
// trace of objects a GC moves, and they drop out of the result (about one
// run in six of a test that allocates 500 objects and then churns 4 MB:
// most of the 500 vanished). A census by allocationStack taken while the
// tracker runs makes it more likely.
//
// # Leak check
//
// POST /session/{id}/wdext/memory/leaks/start, in the current window's
// page, under the page-state check: reads performance.timeOrigin (the
// document's identity), collects garbage (HeapProfiler.collectGarbage),
// lists the event listeners, takes the baseline heap snapshot (streamed
// into memory/heapsnapshot; its leaks.Summary, ids and collection sizes,
// 4 bytes a node, is kept until stop) and starts the allocation
// tracker with stacks (startTrackingHeapObjects, trackAllocations). POST
// …/leaks/stop {"iterations"}: checks that the current window is the
// same page and its timeOrigin the same (a navigation or reload made a
// new document: the baseline is gone, and stop says so, "unsupported
// operation", after stopping the tracker), collects garbage, takes the
// final snapshot with stopTrackingHeapObjects (allocation stacks
// included), lists the event listeners again, and hands both ends to
// memory/leaks.Find. Each step is named in the error when it fails or
// the command's deadline runs out ("leaks/stop: taking the final heap
// snapshot").
//
// Event listeners are counted on the page's window and document only
// (DOMDebugger.getEventListeners, by type: "Window resize", "Document
// click"), not on elements; a listener's handler is named by its heap
// object id (HeapProfiler.getHeapObjectId, asked after the final
// snapshot, since V8 gives objects ids lazily), so that its creation
// site is the handler closure's allocation site.
//
// With "targets": "all" (StartAllLeaks), the same check runs in each
// isolate of the page, one target per isolate as the census's "all"
// finds them: the page's first, then its out-of-process iframes' and
// dedicated workers', one after the other, each with its own baseline,
// tracker and verdict. Retainer paths in a worker start at its
// DedicatedWorkerGlobalScope. A frame or worker that goes away between
// start and stop gets an error in its place; the page's failure, the
// deadline or a lost connection fails the command, and stops the trackers
// still running (as does a stop from another window). Limits: frames of
// one site share an isolate, whose verdict names the first of them (and
// its document's identity is the only one checked); a worker's own event
// listeners are not counted (Chromium 156's workers have no
// DOMDebugger.getEventListeners: "wasn't found", measured); isolates
// that appear after the start are not checked; a new start replaces the
// check without stopping the old trackers of isolates it no longer
// covers.
package chromium
