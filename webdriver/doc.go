// Package webdriver owns the W3C WebDriver protocol as wdext speaks it: the
// route table of classic commands, the error replies (the error model
// itself is package wire), the request guard (Host, Origin, Content-Type,
// body size), the upstream proxy that forwards every standard command and
// BiDi websocket to the real driver unchanged (an httputil.ReverseProxy;
// see Proxy), and the plumbing of extension commands: Server.Handle and
// Server.HandleFallback route them, every one runs under a deadline
// (Config.CommandTimeout, or its own with Within) and its failure is
// mapped to a W3C error in one place.
//
// With Config.MaxSessions, New Session beyond the limit is "session not
// created" before the driver is asked, and /status says ready false while
// the server is full.
//
// When a session is created, the server binds the engine its upstream
// makes for it (driver.Instance.Bind, package engine). The protocol layer
// never looks inside an engine: the commands do, through package engine's
// capabilities.
package webdriver
