// Command wdext is the WebDriver extension server.
//
//	wdext serve [flags]               serve WebDriver in front of chromedriver (or --upstream)
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
// Each subcommand's -h prints its usage and flags. serve refuses to start
// (exit status 1, saying why) when its driver is missing, not executable,
// or, for the chromedriver it manages, does not start: it starts
// chromedriver before it listens.
package main
