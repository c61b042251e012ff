// Package kind says what an engine is to the program: its name and flags,
// how wdext starts its driver and browsers, how it recognises the
// engine's sessions on a driver it did not start, the commands its
// sessions need on top of forwarding, and how wdext wpt runs tests on it.
//
// Rules:
//   - Each engine package exports one Kind; the registration list
//     (package registry) names each once, the default first. Nothing else
//     in the program names an engine: cmd/wdext and wpt loop over a List.
//   - A Kind holds data and functions, not state: everything it starts
//     belongs to the Managed upstream its Launcher returns, which the
//     caller closes.
//   - The package is neutral: engines import it, it imports no engine and
//     no command package.
package kind
