// Package driver owns the upstream WebDriver endpoint wdext forwards to:
// either a remote URL given by the user, or a chromedriver process that
// wdext starts on a free loopback port, waits for through its /status,
// restarts when it dies and stops, with every browser it launched, by
// process group. An upstream's instances carry the Binder that makes each
// new session's engine (package engine). It also owns how wdext reaches
// drivers itself: one Transport (no HTTP(S)_PROXY) shared with the proxy,
// and SessionClient, which sends one session's commands.
package driver
