// Package driver owns the upstream WebDriver endpoint wdext forwards to:
// either a remote URL given by the user, or a chromedriver process that
// wdext starts on a free loopback port, waits for through its /status,
// restarts when it dies and stops, with every browser it launched, by
// process group.
package driver
