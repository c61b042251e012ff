// Package wkinspector is a small client of WebKit's remote inspector as
// WebKitGTK serves it over HTTP (WEBKIT_INSPECTOR_HTTP_SERVER): a
// WebSocket per inspectable target at /socket/{connection}/{target}/WebPage,
// speaking the Web Inspector protocol. Commands for the page go through
// the connection's Target domain (Target.sendMessageToTarget, replies in
// Target.dispatchMessageFromTarget) to the page's current backend target,
// which changes when a navigation swaps processes; commands for a
// dedicated worker go one level further, through the page's Worker domain.
//
// There is no JSON list of targets: the HTML page at / lists only the
// targets known when the HTTP server connected, so Browser finds pages by
// opening target numbers in turn. Target numbers are small and increase
// as windows open (the automation session takes one of them too).
//
// The browser holds each reply for a delayed acknowledgement on a
// loopback socket of its own, which anything sent on the connection
// releases: a connection nudges while a command waits (nudge.go), and
// whoever sends the driver commands, which wait for the same
// acknowledgement, nudges first (Browser.Nudge).
//
// Subscribers get the events of the page's backend and its workers, and
// the connection's Target.targetCreated and
// Target.didCommitProvisionalTarget (a new backend, whose domains are all
// off). What a new backend needs before its document runs (the bootstrap
// script, the sampling profiler) Conn.PrepareBackends sends it while the
// navigation waits (Target.setPauseOnStart, then Target.resume); its
// events come before the page moves to it, each Event naming its target.
// With the Worker domain enabled, WebKit holds every new dedicated worker
// before its script until Worker.initialized is sent for it: whoever
// enables it must send that.
//
// The protocol's types are written out here for the few commands wdext
// uses: there is no maintained Go package of the Web Inspector protocol.
// What was measured on WebKitGTK 2.50.6 (the held replies, the target
// list): docs/webkitgtk.md.
package wkinspector
