// Package marionette is a client of Marionette, Firefox's own automation
// protocol (what geckodriver translates WebDriver to): LENGTH:JSON
// messages over TCP, commands [0, id, name, params] answered by
// [1, id, error, result], errors carrying W3C codes.
//
// Rules:
//   - Marionette serves one client at a time: a Conn is that client, for
//     the browser's lifetime. Commands from several goroutines are sent in
//     turn by the Conn's writer and matched to their replies by id.
//   - A Conn's reader and writer goroutines are owned by it: they end when
//     the connection does (Close, or Firefox going away), and every
//     command waiting then fails with ErrClosed.
//   - Every call takes a context; a message longer than MaxMessage ends
//     the connection rather than being buffered.
package marionette
