// Package webkitgtk runs WebKitGTK behind wdext (wdext serve --engine
// webkitgtk) and is its engine there. It owns:
//
//   - the Upstream (driver.PerSession): one Xvfb display, started on first
//     use on a free display number, and per session a MiniBrowser (or
//     webkitgtk:browserOptions' binary, with its args) that wdext starts
//     itself, in automation mode with its remote inspector served over
//     HTTP, and a WebKitWebDriver on a free loopback port attached to it;
//   - the Profiler polyfill's way into every document (Inject): the
//     inspector's bootstrap script, with an injecting HTTP proxy as the
//     fallback for windows wdext did not open, and the per-page agent that
//     puts it in dedicated workers, tells each realm its Document-Policy
//     and delivers JavaScriptCore's periodic samples;
//   - the Engine bound to a session of the Upstream, which serves forced
//     samples, measure, gc, censuses, live objects and the leak check
//     through the browser's inspector (package wkinspector), and the
//     Walker for WebKitGTK drivers wdext does not run (BindRemote), which
//     only forces samples, through WebDriver frame switches.
//
// Rules:
//
//   - Browser and driver are two process groups (internal/procgroup,
//     each under a supervisor);
//     Delete Session, a failed new session and Close kill both, and either
//     one dying takes the other along, so that the session answers
//     "invalid session id".
//   - A browser that exits or opens no inspector within StartTimeout, and
//     a POST /session the driver has not answered within
//     NewSessionTimeout (it hangs forever on a browser that does not
//     answer), are "session not created" with the reason.
//   - A session is handed to the client (and New Window's window, which
//     Register takes over) only once its page is prepared (the bootstrap
//     script set, the agent armed), and a navigation that swaps processes
//     waits, paused, until the new backend is prepared too.
//   - The engine never switches the client's window or frame; the Walker
//     does, and restores them.
//   - What the engine cannot give is "unsupported operation" saying why
//     (Lacks, MeasureMemory): source "api", the allocation log and the
//     GC log (WebKit's inspector lacks them), the leak check of all
//     targets (not done yet: the page's VM is checked). createdFrom is
//     always null: JavaScriptCore keeps no allocation stacks.
//   - Every command the engine sends the driver is preceded by a nudge of
//     the browser's inspector (the browser holds replies for a delayed
//     acknowledgement).
//   - WebKitWebDriver's own deviations from WebDriver pass through
//     unchanged.
//
// How each of these is done, what was measured on WebKitGTK 2.50.6 and
// why, and the driver's deviations: docs/webkitgtk.md.
package webkitgtk
