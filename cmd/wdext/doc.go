// Command wdext is the WebDriver extension server.
//
//	wdext serve [flags]               serve WebDriver in front of a driver it starts (or --upstream)
//	wdext wpt [flags] PATHS...        run WPT-style testharness.js suites through wdext
//	wdext setup                       install testharness.js for wdext wpt, once per user
//	wdext census [--breakdown JSON] FILE
//	                                  take a Debugger.Memory-style census of a saved V8 or
//	                                  JavaScriptCore snapshot
//	wdext leaks --baseline B [--target T] --final F [--iterations N] [--json]
//	                                  find leaks in saved V8 snapshots (memlab's three-snapshot method)
//	wdext report KIND [-o FILE] FILE...
//	                                  draw traces, censuses, a census diff or a leak verdict as one HTML file
//	wdext version                     the version it was built as (also: wdext --version)
//
// Each subcommand's -h prints its usage and flags. serve and wpt take the
// engines of package registry: --engine picks the one whose driver wdext
// starts (each kind adds its own flags), and --upstream fronts a running
// driver or grid instead, binding each session with the first kind that
// recognises its browser. serve refuses to start (exit status 1, saying
// why) when the driver is missing, not executable, or, for a driver the
// sessions share, does not start: it starts that driver before it listens.
//
// The request path: main → serve → serverFlags.build (stack.go) →
// webdriver.Server, which proxies to the upstream or runs wdext's commands.
package main
