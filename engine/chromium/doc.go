// Package chromium is wdext's engine for Chromium sessions: those whose
// driver (chromedriver, or a grid in front of one) announces a CDP
// endpoint, goog:chromeOptions.debuggerAddress. Bind makes an Engine per
// session; it dials the browser's DevTools endpoint on first use (again
// when the connection broke) and serves every capability of package
// engine through it, with the client in package cdp beneath: forced
// samples by tracing, Measure Memory, V8 heap snapshots (censuses, live
// objects, the leak check), the sampling heap profiler (the allocation
// log) and the GC log by tracing. Defaults are what a managed
// chromedriver's new sessions get (ManagedDefaults: a Chromium binary,
// --no-sandbox as root, headless switches without a display, and the V8
// flag --no-compact that the leak check's createdFrom needs); they never
// override what the client asked for.
//
// Rules:
//
//   - Every command but the GC log works on the page target of the
//     session's current window, asked of the driver each time (extension
//     commands do not see the client's window switches); its CDP target
//     id is the window handle. wdext talks to targets over flat CDP
//     sessions of its own.
//   - Before it relies on a target, a command checks that the target
//     answers, and long calls run under a watch (pagestate.go): a busy
//     main thread is "timeout", a user prompt "unexpected alert open", a
//     crashed renderer "tab crashed", a closed page "no such window",
//     within seconds rather than at the command's deadline. A command
//     under way when the session ends is "invalid session id".
//   - An endpoint that does not answer is judged with the driver's help:
//     the driver's error when it has one; else a plain failure for an
//     endpoint that answered before, and "unsupported operation" for one
//     never reached (a grid node's loopback address).
//   - The browser runs one tracing session at a time; its one owner on a
//     connection is cdp.Browser.LockTracing. A force holds it for
//     milliseconds, the GC log for as long as it collects (forcesample
//     meanwhile is "unsupported operation" naming the GC log). The GC
//     log does not start while another client traces ("unsupported
//     operation"), and drops no events silently.
//   - A force adds exactly one sample to each profiler it reaches, one
//     profiler per V8 isolate: it pauses every isolate's main thread in
//     the debugger, then page by page arms devtools.timeline alone
//     through the page's own session (only its frame tree's processes
//     trace), has each of its isolates run console.timeStamp in an
//     isolated world and disarms, then resumes.
//     Nothing of the pages runs while the category is armed.
//   - A stack-samples session (wdext:stackSamples) instead keeps
//     devtools.timeline armed from its creation to its end, holding the
//     browser's tracing: a page's own console.timeStamp samples its
//     caller, every callback samples too, and a force pauses nothing
//     (stacksamples.go).
//   - Heap snapshots stream into memory/heapsnapshot as they arrive; the
//     JSON is never held whole. "targets": "all" means the page and each
//     out-of-process iframe and dedicated worker below it, one target per
//     isolate; a frame or worker that fails has an error of its own, the
//     page's failure fails the command.
//   - The leak check keeps the baseline's summary only, and tells a new
//     document by performance.timeOrigin: stop after a navigation is
//     "unsupported operation".
//
// How each command is done, Chromium's limits (one forced sample per
// isolate, the browser-wide 10 s Tracing.start stall it avoids, what a worker lacks) and why,
// measured: docs/chromium.md.
package chromium
