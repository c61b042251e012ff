// Package driver owns the upstream WebDriver endpoints wdext forwards to,
// and how wdext reaches them itself. It knows no browser.
//
//   - An Upstream gives the server an Instance (a driver's URL, whether its
//     process is alive, and the engine.Binder of the sessions it holds):
//     Remote for a URL the user gave; an engine's own upstream for a driver
//     wdext runs (package engine/kind).
//   - A PerSession upstream runs one driver per session: the server asks it
//     for a driver per New Session and tells it when the session ends.
//   - Defaults add what a managed driver's machine needs to a new-session
//     request, never overriding the client.
//   - Transport carries every request wdext sends a driver (the proxy's
//     and its own): no HTTP(S)_PROXY, no compression. SessionClient sends
//     one session's commands on it; StatusReady asks a driver's /status.
//
// Rules: contexts bound every request; an Upstream's Close stops all it
// started, browsers included, by process group (package procgroup).
package driver
