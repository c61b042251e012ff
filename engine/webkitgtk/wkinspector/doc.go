// Package wkinspector is a small client of WebKit's remote inspector as
// WebKitGTK serves it over HTTP (WEBKIT_INSPECTOR_HTTP_SERVER): a
// WebSocket per inspectable target at /socket/{connection}/{target}/WebPage,
// speaking the Web Inspector protocol. Commands for the page go through
// the connection's Target domain (Target.sendMessageToTarget, replies in
// Target.dispatchMessageFromTarget) to the page's current backend target,
// which changes when a navigation swaps processes; commands for a
// dedicated worker go one level further, through the page's Worker domain.
//
// There is no JSON list of targets: the HTML page at / lists the targets
// known when the HTTP server connected (measured on WebKitGTK 2.50.6: a
// window opened later is not listed, and listed URLs are not updated), so
// Browser finds pages by opening target numbers in turn. Target numbers
// are small and increase as windows open (the automation session takes
// one of them too).
//
// Every command costs about 44 ms (measured on WebKitGTK 2.50.6, any
// command): the page backend answers Target.sendMessageToTarget and then
// the command itself, two small writes in a row on a socket of its own
// without TCP_NODELAY, so Nagle holds the second until the first is
// acknowledged, which the receiving end delays by 40 ms (seen with
// strace). Nothing on wdext's side of the WebSocket changes that, so the
// client sends concurrent commands where it can and keeps what events
// tell it (FrameContexts) rather than asking again.
//
// Subscribers get the events of the page's backend and its workers, and
// the connection's Target.targetCreated and
// Target.didCommitProvisionalTarget (a new backend, whose domains are all
// off). With the Worker domain enabled, WebKit holds every new dedicated
// worker before its script until Worker.initialized is sent for it
// (measured on WebKitGTK 2.50.6): whoever enables it must send that.
//
// The protocol's types are written out here for the few commands wdext
// uses: there is no maintained Go package of the Web Inspector protocol.
package wkinspector
