// Package polyfill holds wdext's Profiler polyfill (profiler.js, embedded):
// the JS Self-Profiling API's Profiler interface for engines that have
// none (WebKitGTK), following the spec's WebIDL and algorithms:
//
//   - exposed in windows and dedicated workers (the spec's
//     [Exposed=(Window,Worker)], as Chromium ships it: Window and
//     DedicatedWorker), once per realm;
//   - new Profiler(options): options converted as the ProfilerInitOptions
//     dictionary (both members required: TypeError when missing;
//     sampleInterval a finite double, else TypeError; maxBufferSize an
//     unsigned long, converted modulo 2^32 as WebIDL does without
//     [EnforceRange]); a negative sampleInterval is a RangeError; then
//     the spec's Document Policy step: when the realm has been told that
//     its document's Document-Policy does not allow js-profiling
//     (SetPolicyScript), a "NotAllowedError" DOMException, as Chromium
//     throws it;
//   - sampleInterval reflects the interval asked for, unrounded
//     (Chromium 156 rounds up to a multiple of 10 ms: 0 → 10, 1 → 10,
//     12.5 → 20, measured);
//   - stopped, stop() → Promise<ProfilerTrace>, rejected with an
//     "InvalidStateError" DOMException once stopped; the trace's
//     resources, frames, stacks and samples are built with the spec's
//     "get an element ID", "get a frame ID" and "get a stack ID", so equal
//     resources, frames and stacks appear once; samples without a stack
//     have no stackId, frames without a script no resourceId/line/column;
//   - samplebufferfull is fired (in a task of its own, once) at the
//     profiler whose buffer is full when a forced sample is due; several
//     profilers run concurrently and each takes every sample.
//
// Samples come from two sources:
//
//   - Forced samples: globalThis[Symbol.for("wdext.profiler.forceSample")]()
//     adds one sample without a stack to every started profiler of its
//     realm (what wdext's forcesample runs in each frame and worker);
//     ...forceSampleHere() adds one whose stack is its caller's, parsed
//     from new Error().stack in JavaScriptCore ("name@url:line:col") or V8
//     ("at name (url:line:col)") format, outermost frame first, line and
//     column 1-based as the stack prints them (the call's position).
//   - Periodic samples, where an engine provides them (wdext's WebKitGTK
//     engine: JavaScriptCore's sampling profiler, see engine/webkitgtk):
//     EnableSamplerScript says so; stop() then logs StopMessage with a
//     token through console.debug and resolves once DeliverScript has
//     brought the engine's samples for that token (after 5 s without
//     them, with what it has). Each profiler keeps, of the delivered
//     samples, those taken in its lifetime, one per sampleInterval at
//     most on a grid that starts at construction (so the first comes a
//     sampleInterval after it), with the frames of scripts of its realm's
//     origin and of builtins they call (performance.now() as "now"); the
//     other frames are left out, and a sample with none left has no
//     stack (the spec's realm check). Their frames carry the function's
//     line and column (where it is defined, as the spec says) and
//     accessors are named "get x"/"set x", as the spec's examples and V8
//     name them (both as JavaScriptCore's sampler reports them). Forced
//     and periodic samples are merged in time order when the profiler
//     stops.
//
// Where it departs from the spec, because a script cannot do better:
//   - No sample at construction (Chromium takes one there), and no
//     samples while no JavaScript runs (the spec samples every interval;
//     JavaScriptCore's sampler only while the VM runs code).
//   - Until the realm is told its Document-Policy it allows profiling:
//     the policy comes from the document's response headers, which a
//     script cannot read; see engine/webkitgtk for when it is told (with
//     wdext's proxy, before any page script; otherwise shortly after the
//     document's context appears). Workers are told what the proposal
//     for Document Policy in workers says, where the engine knows it.
//   - The muted-errors check (frames of CORS-cross-origin scripts left
//     out) is approximated by origin: frames of scripts from another
//     origin are left out even when fetched with CORS.
//   - Frames of forced samples with the caller's stack come from Error
//     stacks: their line and column are the call's position, and
//     JavaScriptCore names an accessor there without "get "/"set ".
//   - Markers are never set.
//   - When the buffer is full the profiler takes no more samples but
//     stopped stays false and stop() still resolves with the trace: the
//     spec's "move the state to stopped" would make stop() reject and the
//     trace unreachable. Chromium 156 does the same (measured: after
//     samplebufferfull, stop() resolves with the full buffer). Periodic
//     samples arrive at stop(): past the buffer's size they are dropped,
//     and samplebufferfull is not fired for them.
//   - Each realm needs it injected (see forcesample's WebKitGTK path and
//     engine/webkitgtk for how and when).
package polyfill
