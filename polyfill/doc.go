// Package polyfill holds wdext's Profiler polyfill (profiler.js, embedded):
// the JS Self-Profiling API's Profiler interface for engines that have
// none (WebKitGTK), following the spec's WebIDL and algorithms:
//
//   - new Profiler(options): options converted as the ProfilerInitOptions
//     dictionary (both members required: TypeError when missing;
//     sampleInterval a finite double, else TypeError; maxBufferSize an
//     unsigned long, converted modulo 2^32 as WebIDL does without
//     [EnforceRange]); a negative sampleInterval is a RangeError;
//   - sampleInterval reflects the interval asked for, unrounded: the
//     polyfill never samples on a timer, so there is no timer resolution
//     to round to (Chromium 156 rounds up to a multiple of 10 ms: 0 → 10,
//     1 → 10, 12.5 → 20, measured);
//   - stopped, stop() → Promise<ProfilerTrace>, rejected with an
//     "InvalidStateError" DOMException once stopped; the trace's
//     resources, frames, stacks and samples are built with the spec's
//     "get an element ID", "get a frame ID" and "get a stack ID", so equal
//     resources, frames and stacks appear once; samples without a stack
//     have no stackId, frames without a script no resourceId/line/column;
//   - samplebufferfull is fired (in a task of its own, once) at the
//     profiler whose buffer is full when a sample is due; several
//     profilers run concurrently and each takes every forced sample.
//
// Samples come only from forced samples, so traces are deterministic:
// globalThis[Symbol.for("wdext.profiler.forceSample")]() adds one sample
// without a stack to every started profiler of its realm (what wdext's
// forcesample runs in each frame); ...forceSampleHere() adds one whose
// stack is its caller's, parsed from new Error().stack in JavaScriptCore
// ("name@url:line:col") or V8 ("at name (url:line:col)") format, outermost
// frame first, line and column 1-based as the stack prints them.
//
// Where it departs from the spec, because a script cannot do better:
//   - No timer samples, and no sample at construction (Chromium takes one
//     there): a trace holds forced samples only.
//   - Document Policy "js-profiling" is not checked (a script cannot read
//     its document's response headers): the constructor never throws
//     NotAllowedError.
//   - The muted-errors check (frames of CORS-cross-origin scripts left
//     out) is approximated by origin: frames of scripts from another
//     origin are left out even when fetched with CORS.
//   - Markers are never set.
//   - When the buffer is full the profiler takes no more samples but
//     stopped stays false and stop() still resolves with the trace: the
//     spec's "move the state to stopped" would make stop() reject and the
//     trace unreachable. Chromium 156 does the same (measured: after
//     samplebufferfull, stop() resolves with the full buffer).
//   - It is [Exposed=Window] like the spec, and per realm: each frame
//     needs it injected (see forcesample's WebKitGTK path for how and when).
package polyfill
