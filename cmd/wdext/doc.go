// Command wdext is the WebDriver extension server.
//
//	wdext serve [flags]               serve WebDriver in front of chromedriver (or --upstream)
//	wdext wpt [flags] PATHS...        run WPT-style testharness.js suites through wdext
//	wdext census FILE.heapsnapshot    take a Debugger.Memory-style census of a saved snapshot
//
// Each subcommand's -h lists its flags.
package main
