// Package firefox is the Firefox engine: wdext runs firefox-esr itself,
// headless, one browser per session, and is its Marionette client (there
// is no geckodriver here; Mozilla's wptrunner drives Firefox the same
// way).
//
// What it owns:
//   - the Upstream (driver.PerSession): for each new session, a
//     translator on a loopback port that the server forwards to like any
//     driver. At New Session it processes the capabilities as WebDriver's
//     remote end does (alwaysMatch/firstMatch, validation, matching),
//     starts Firefox on a fresh profile with the session's
//     moz:firefoxOptions binary, args, prefs and env, and makes
//     Marionette's session, flat capabilities as Marionette takes them;
//   - the translation: each classic W3C command is one Marionette command
//     (routes), Get Named Cookie and Status excepted; Marionette's errors
//     already carry W3C codes. webSocketUrl is Firefox's own BiDi server,
//     which the server proxies as any driver's;
//   - the Engine: the extension commands Firefox serves, by privileged
//     script in the page's content process (Marionette's "system"
//     sandbox), and, for the others, why not (Lacks);
//   - wdext's Debugger in every content process (process.js), loaded at
//     New Session, before the client has the session, through
//     Marionette's chrome context (Firefox runs with
//     -remote-allow-system-access), with a hub in the parent (hub.js)
//     that relays questions to every process and keeps the session's
//     memory settings, which processes yet to start follow too;
//   - the Profiler polyfill in dedicated workers: process.js holds each
//     new one before its first line until its WorkerDebugger's script
//     (worker.js, served as resource://wdext/ from the browser's
//     directory) has put the polyfill and the creator's Document-Policy
//     in; forcesample reaches the workers the same way;
//   - periodic samples: the hub runs the Gecko profiler from New Session,
//     and process.js delivers a window's samples when one of its
//     profilers stops.
//
// Rules:
//   - Marionette serves one client: the translator is it, for the
//     browser's life. Its chrome context is used once, at New Session:
//     a client command never meets it (but see docs/firefox.md for what
//     -remote-allow-system-access opens to BiDi clients). A Firefox
//     behind --upstream (geckodriver) is forwarded to without the
//     extension commands (BindRemote says why).
//   - Each browser runs under procgroup in the group's own directory, its
//     profile there too: nothing is left after the session, after
//     SIGTERM, or after wdext is killed (the next run sweeps).
//   - No command package is imported: the engine answers capabilities of
//     package engine.
package firefox
