// Package cdp is a small Chrome DevTools Protocol client: one websocket to
// the browser endpoint with flat sessions for its targets. Conn and its
// Sessions implement cdproto's cdp.Session, so commands and events are
// the typed values of github.com/chromedp/cdproto rather than hand-written
// JSON.
package cdp
