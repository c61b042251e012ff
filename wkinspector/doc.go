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
// The protocol's types are written out here for the few commands wdext
// uses: there is no maintained Go package of the Web Inspector protocol.
package wkinspector
