// Package polyfill holds wdext's Profiler polyfill (profiler.js, embedded):
// the JS Self-Profiling API's Profiler interface for engines that have
// none (WebKitGTK, Firefox), following the spec's WebIDL and algorithms. Script
// installs it in a realm; ForceSampleScript forces a sample there;
// SetPolicyScript, EnableSamplerScript and DeliverScript are what an
// engine runs in a realm to tell it its Document-Policy, that periodic
// samples exist, and to hand them over. InjectScript, InjectPolicy and
// JSProfilingAllowed are for servers that put these in documents.
//
// Rules:
//
//   - It installs itself once per realm, in windows and dedicated workers
//     (the spec's [Exposed=(Window,Worker)]); running it twice is harmless.
//   - new Profiler(options) converts options as WebIDL does (TypeError for
//     a missing member or a non-finite sampleInterval, maxBufferSize
//     modulo 2^32), throws a RangeError for a negative sampleInterval and
//     a "NotAllowedError" DOMException once the realm has been told that
//     its Document-Policy does not allow js-profiling. sampleInterval
//     reflects the interval asked for, unrounded.
//   - stop() resolves with a ProfilerTrace built with the spec's "get an
//     element/frame/stack ID", so equal resources, frames and stacks
//     appear once; once stopped it rejects with "InvalidStateError".
//   - Forced samples: globalThis[Symbol.for("wdext.profiler.forceSample")]()
//     adds one sample without a stack to every started profiler of its
//     realm (what wdext's forcesample runs in each frame and worker);
//     ...forceSampleHere() adds one with its caller's stack, parsed from
//     an Error stack (JavaScriptCore's or V8's format).
//   - Periodic samples come from the engine (EnableSamplerScript): stop()
//     logs StopMessage with a token through console.debug and resolves
//     once DeliverScript has brought the samples for that token (after
//     5 s, with what it has). Each profiler keeps those of its lifetime,
//     one per sampleInterval at most on a grid starting at construction,
//     with the frames of its realm's origin and of the builtins they call;
//     forced and periodic samples are merged in time order.
//   - A sample is taken at construction, with the constructor's caller's
//     stack (as V8 takes one).
//   - samplebufferfull fires once, in a task of its own, at a profiler
//     whose buffer is full when a sample is due: a forced one, or a
//     periodic one when the engine delivers them (at stop()).
//
// Where it departs from the spec, because a script cannot do better:
//
//   - on WebKitGTK no periodic sample while no JavaScript runs
//     (JavaScriptCore's sampler samples running code only; Firefox's
//     Gecko profiler gives idle samples, without a stack, as V8 does), and
//     a periodic sample past a full buffer fires samplebufferfull only
//     when the samples are delivered;
//   - a realm may profile until told its Document-Policy (a script cannot
//     read its document's response headers; the engine tells it);
//   - frames of scripts of another origin are left out even when fetched
//     with CORS (the muted-errors check, approximated by origin);
//   - frames of forced samples with the caller's stack carry the call's
//     position, not the function's, and name accessors as the engine's
//     Error stacks do: "get x" on SpiderMonkey (and V8), "x" on
//     JavaScriptCore (its periodic samples say "get x");
//   - markers are never set;
//   - when the buffer is full the profiler takes no more samples but
//     stopped stays false and stop() still resolves with the trace: the
//     spec's "move the state to stopped" would make stop() reject and the
//     trace unreachable (Chromium does the same).
//
// How wdext's engines inject it, tell it its policy and feed it samples,
// measured: docs/webkitgtk.md and docs/firefox.md.
package polyfill
