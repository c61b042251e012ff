// Package webkitgtk runs WebKitGTK behind wdext (wdext serve --engine
// webkitgtk): an Upstream (driver.PerSession) that owns one Xvfb display,
// started on first use on a free display number (-displayfd), and per
// session a MiniBrowser (/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser,
// or webkitgtk:browserOptions' binary, with its args) and a WebKitWebDriver
// on a free loopback port attached to it, ready when its /status says so.
//
// wdext starts the browser itself, in automation mode (--automation), so
// that it also serves its remote inspector over HTTP
// (WEBKIT_INSPECTOR_HTTP_SERVER on a free loopback port): the memory
// commands' way in (package wkinspector). WebKitGTK 2.50 then ignores
// WEBKIT_INSPECTOR_SERVER and puts the inspector server, where the driver
// attaches (--target), on a port of its own choosing, read from the
// browser's listening sockets in /proc. The inspector's target list is
// read before the driver attaches: the automation session takes the next
// target number, which must never be opened (that hands the browser's
// automation to the opener: the driver hangs, measured). MiniBrowser runs
// with --enable-page-cache=false: with the back/forward cache, the workers
// of a document navigated away from stay listed by the inspector,
// suspended, and never answer (measured); the client's args come after
// and can turn it on again.
//
// Browser and driver are two process groups (internal/procgroup: a
// parent-death signal, a marker, reaped orphans); deleting the session, a
// failed new session and Close kill both (SIGTERM, then SIGKILL after
// 2 s), and either one dying takes the other along, so that the session
// answers "invalid session id". MiniBrowser's web and network processes
// are in its group.
//
// With Inject set (wdext serve --engine webkitgtk sets it to the Profiler
// polyfill), the script runs first in every frame, two ways:
//
//   - The inspector's bootstrap script (Page.enable, then
//     Page.setBootstrapScript), set on the session's first window once the
//     session exists and before the client hears of it (before that,
//     Page.enable gets no answer: measured), on each window New Window
//     opens before its reply goes out (Register takes that command over),
//     and on every window wdext's inspector client finds later. It runs
//     before the page's own scripts whatever the document: https,
//     about:blank, srcdoc and data: documents, a Content-Security-Policy
//     that forbids inline scripts, a client's own proxy; and it stays
//     through navigations to other sites (measured). A navigation that
//     moves the page to a new web process (a cross-origin isolated
//     document, say) gives it a new inspector backend that has none: the
//     navigation waits, paused, until wdext has set it there
//     (wkinspector.Conn.PrepareBackends; before that was done, such an
//     https document had no Profiler, measured).
//   - An HTTP proxy, the fallback for windows wdext did not open (a link
//     with target=_blank, say) until it finds them, and for a bootstrap
//     script the inspector refused: a new session gets it as its proxy
//     capability (proxyType manual, httpProxy 127.0.0.1:P) unless the
//     client named a proxy. The proxy puts the script first in every HTML
//     document fetched for a navigation (Sec-Fetch-Dest
//     document/iframe/frame, or an Accept starting with text/html), after
//     the doctype; HTML fetched by script comes back untouched. Measured:
//     WebKitGTK sends loopback requests through the proxy. It does not
//     cover https (CONNECT is tunnelled as is), about:blank, srcdoc and
//     data: documents, nor a Content-Security-Policy that forbids inline
//     scripts. With the proxy in the request, MiniBrowser's reply carries
//     no "proxy" capability (without it: "proxy": {}).
//
// The polyfill installs itself once per realm, so running both ways is
// harmless. The proxy also puts the document's Document-Policy in its
// script (polyfill.SetPolicyScript); InjectPolicy does the same for a
// server or proxy of the client's that serves documents to the session.
//
// # The polyfill's agent
//
// With Inject set, every page the inspector client prepares gets an agent
// (agent.go), armed before the session (or New Window's window) is handed
// to the client, that makes the polyfill closer to the spec:
//
//   - Document-Policy: the spec's constructor throws "NotAllowedError"
//     unless the document's Document-Policy allows js-profiling. A script
//     cannot read its document's response headers, so wdext tells each
//     document: through its proxy, in the document itself (before any
//     page script runs); and through the inspector, for what the proxy
//     does not carry (https, a client's own proxy): the Network domain's
//     responseReceived gives a frame's document response headers, and
//     when that document's execution context appears (Runtime domain) the
//     agent tells it, if the context's URL is the response's. That comes
//     a round trip after the context appears: a script that constructs a
//     Profiler while its document is still being parsed may run first,
//     and is then allowed (measured: after a WebDriver navigation, the
//     first new Profiler() run through Execute Script sometimes still
//     succeeds over https or without wdext's proxy;
//     TestProfilerDocumentPolicy polls for it). Documents without a
//     response of their own (about:blank, srcdoc, data:) are never told:
//     they may always profile. Dedicated workers (the spec speaks of
//     documents only) get what the proposal for Document Policy in
//     workers says: a worker fetched over the network its script's
//     response's policy (the page fetches the script, through the Network
//     domain, before the worker starts), a blob: worker its creator's
//     (here: the policy of the frames of the blob URL's origin, when they
//     agree), told before the worker's script runs; others (data:) may
//     always profile.
//   - Workers: with the Worker domain enabled, WebKit holds a new
//     dedicated worker before its script runs until the inspector sends
//     Worker.initialized (measured on WebKitGTK 2.50.6: a worker's
//     message came only after it); the agent first evaluates the polyfill
//     in the worker (Runtime.evaluate through Worker.sendMessageToWorker),
//     so workers have a Profiler from their first line, whatever their
//     URL (http, blob:, data:, module or classic). This beats wrapping
//     Worker in the page (a blob: worker that importScripts the polyfill
//     and then the script): that changes the worker's URL, base URL and
//     origin, and does not work for module workers. Forced samples reach
//     the workers' profilers too (Engine.ForceSample).
//   - Periodic samples: JavaScriptCore's sampling profiler, through the
//     inspector's ScriptProfiler domain (startTracking with
//     includeSamples), runs all along (measured: it samples about every
//     millisecond while JavaScript runs, nothing while it does not; a
//     fib(34) loop took a median 33 ms with it and 32-33 ms without, on
//     a loaded machine). Samples are only handed over when tracking stops
//     (trackingComplete), and the inspector's commands run on the page's
//     main thread, so they cannot be fetched while the page's JavaScript
//     runs; the agent therefore keeps tracking on, and when a profiler's
//     stop() asks (a console.debug message, Console domain) it stops
//     tracking, starts it again and reads the page's clock, three
//     commands in one write that the page's main thread handles back to
//     back (what JavaScript a task might run between them goes
//     unsampled), and delivers the samples to every frame, where
//     each profiler keeps those of its lifetime and realm at its
//     sampleInterval (see package polyfill). It also collects every 10 s,
//     so that JavaScriptCore does not hoard them. Times: the samples'
//     stopwatch seconds are mapped to performance.timeOrigin +
//     performance.now() by evaluating that right after tracking restarts
//     (trackingStart gives the stopwatch's time then). JavaScriptCore
//     gives part of the samples the timestamp 0 (measured: the earlier
//     ones of a long run, 609 of the 707 samples of a 1 s loop, none of a
//     20 ms one); their order is right, so they are spread evenly between
//     the known times around them. Frames: JavaScriptCore's sampler names
//     accessors "get x"/"set x", as V8 and the spec's examples do (its
//     Error stacks say "x"), and gives each function's own line and
//     column; a strict-mode "return f()" is a proper tail call in
//     JavaScriptCore, so the caller's frame is not on the stack. Frames of
//     scripts without a URL (the inspector's, the automation's,
//     JavaScriptCore's own builtins) are left out; host functions (line
//     -1: "now" for performance.now()) are kept by name, and the polyfill
//     keeps them when its realm's code called them. A stop() costs the
//     round trips of the collection (measured: 75 to 195 ms on a loaded
//     machine, with samples of 0.5 s of JavaScript). Workers get no periodic
//     samples: the ScriptProfiler domain is not offered for worker targets
//     (its protocol lists page, javascript and itml targets only).
//
// A navigation that swaps processes gives the page a new inspector
// backend with every domain off. It waits, paused, until the agent has
// started the sampling profiler there, with the Page domain (whose
// stopwatch times the samples) and the Network domain (the document's
// response, for its policy); the agent arms the rest when the swap is
// committed (Target.didCommitProvisionalTarget). Before, the new
// document's first scripts ran unsampled (measured on WebKitGTK 2.50.6:
// WPT-style tests that spin at load, run after an https test, got no
// periodic samples in 2 to 3 runs of 12 on a loaded machine). A worker
// that the new document starts before the agent has armed its backend
// still has no polyfill.
//
// A browser that exits, or opens no inspector within StartTimeout (20 s),
// is "session not created" with its output. POST /session hangs forever in
// WebKitWebDriver when the browser does not answer, while its /status
// still says ready: the server bounds the request with NewSessionTimeout
// (30 s by default) and answers "session not created" naming the driver
// and the timeout; driver and browser are then killed.
//
// Known deviations of WebKitWebDriver (WebKitGTK 2.50.6, Debian 12,
// measured), passed through unchanged — TestConformanceWithWebKitWebDriver
// in package webdriver checks that wdext answers exactly like the driver:
//   - browserName is "MiniBrowser" (see IsBrowser); no goog:chromeOptions,
//     no CDP endpoint (wdext reaches the browser through its own
//     inspector client instead);
//   - one session per driver: a second POST /session is "session not
//     created: Maximum number of active sessions";
//   - no WebDriver BiDi: webSocketUrl in alwaysMatch is "session not
//     created: Failed to match capabilities";
//   - element screenshots are PNGs of the element's size with every pixel
//     black (a 71x24 button: no other pixel); page screenshots are fine;
//   - no forcesample: "unknown command" (wdext's own then runs);
//   - a command while a user prompt is open answers 500 "unexpected alert
//     open" (unhandledPromptBehavior "dismiss and notify");
//   - Add Cookie with a domain other than the page's answers 200 instead
//     of "invalid cookie domain";
//   - an unknown element reference is "no such element", not "stale
//     element reference";
//   - Error stacks of scripts run by Execute Script carry no URL
//     ("foo@", "@");
//   - window.open from a script returns null and opens no window.
//
// A command for a session wdext does not know cannot be forwarded (there
// is no shared driver): it is "invalid session id". The same goes for a
// command after Delete Session, whose driver is gone; its message is
// wdext's, not the driver's.
//
// # The engine
//
// A session of the Upstream gets an Engine bound to the browser's
// inspector client; a WebKitGTK session of a driver wdext does not run
// (BindRemote) gets a Walker, which only forces samples.
//
// Force Sample:
//
// On WebKitGTK there is no Profiler and no CDP: Profiler is wdext's polyfill
// (package polyfill), which the webkitgtk upstream puts first in every
// frame and dedicated worker, and the command calls the polyfill's
// forceSample hook once per realm: one stack-less sample in every started
// profiler there. Measured
// on WebKitGTK 2.50.6: every profiler, several per document included,
// gets exactly one sample per call (the Chromium limits, see package
// engine/chromium, do not apply). Two ways to reach the realms:
//
//   - Engine.ForceSample, for sessions whose browser wdext started:
//     through WebKit's remote inspector
//     (package wkinspector), each page's frames' main-world execution
//     contexts (Runtime.enable with the Page domain on), and, where the
//     agent put the polyfill in them, each dedicated worker, evaluated
//     all at once. No window or frame is switched, so a client command sent
//     meanwhile runs where the client is. Pages are the ones the inspector
//     client knows, looked for again when the driver lists more windows.
//   - Walker.ForceSample, for WebKitGTK drivers wdext does not run: WebDriver
//     commands sent straight to the session's driver. It notes the
//     client's current window and the path of child indexes from its top
//     to the current frame, then for every window visits every frame depth
//     first (Switch To Frame by index, Switch To Parent Frame) and finally
//     switches back. Workers are out of its reach. Limits: a command the client sends concurrently runs
//     in whatever frame the force is visiting; a client whose current
//     frame was discarded ends up in its window's top-level context; one
//     whose current window was closed gets the driver's "no such window".
//
// Memory:
//
// The Engine's measure and gc are in memory.go; its census and live
// objects (heap.go): the page is the one whose URL the driver reports as
// the current window's (page.go), the census is of JavaScriptCore heap snapshots
// (Heap.snapshot, read by memory/jscsnapshot, counted by census.JSC) of
// the page's VM, which holds every frame of the page, and with "targets":
// "all" of each dedicated worker's VM too (type "worker", targetId the
// inspector's worker id). Live objects are the cells of the snapshot
// Heap.stopTracking takes that the one Heap.startTracking took lacks (JSC
// snapshots identify cells across snapshots), by class; createdFrom is
// null, since JavaScriptCore keeps no allocation stacks. The allocation
// log and the GC log answer "unsupported operation" saying what WebKit's
// inspector lacks: no allocation recording at all, and collection events
// without sizes and with times of 0 (measured on WebKitGTK 2.50.6, with and
// without a Timeline recording).
//
// # Leak check
//
// leaks/start and leaks/stop (leaks.go) take JavaScriptCore heap
// snapshots of the page's VM (each after a full collection), read with
// their edges and written in V8's vocabulary (leaks.FromJSC), so the
// verdict follows the same rules as on Chromium. What the snapshots do
// not say, the page is asked in one Runtime.evaluate, along paths of data
// properties and elements from the current global object (the one the
// window proxy points to; older documents' globals may still be in the
// heap): the sizes of Maps and Sets, and whether the DOM nodes made since
// the start are connected, and their selectors. A Map or a detached node
// that only a closure holds is not asked about: the Map's growth is not
// seen, and the node counts as an object of its class. Handles to the
// cells (Heap.getRemoteObject) would reach them all, but WebKitGTK 2.50.6
// hangs the page on them (measured: no reply from the sixth on, nor to
// any later command, in every run). Event listeners are the window's and
// the document's (DOM.getEventListenersForNode on the document). createdFrom
// is null: JavaScriptCore keeps no allocation stacks. A navigation between
// start and stop is told by the document's time origin.
package webkitgtk
