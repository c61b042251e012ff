// Package webdriver owns the W3C WebDriver protocol as wdext speaks it: the
// route table of classic commands, the error codes with their HTTP statuses
// and JSON envelope, capability helpers, the request guard (Host, Origin,
// Content-Type, body size), and the upstream proxy that forwards every
// standard command and BiDi websocket to the real driver unchanged.
//
// Engine code (CDP, polyfills) lives elsewhere and plugs in as extension
// commands through Server.Handle and Server.HandleFallback.
package webdriver
