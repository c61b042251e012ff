// Package framewalk forces a sample through the Profiler polyfill in
// every frame of every window of a session, by WebDriver commands alone:
// the way for an engine that injects the polyfill but has no channel of
// its own into the pages' realms (a WebKitGTK driver wdext did not start;
// Firefox, reached through Marionette).
//
// Rules:
//   - It sends commands to the session's driver (engine.Driver), never
//     through the server, and restores the client's current window and
//     frame afterwards, so the client sees no switch.
//   - Workers are out of its reach: a frame walk sees documents only.
//   - It imports engine and nothing of an engine's: engines import it.
package framewalk
