// Package wpt owns `wdext wpt`: serving a web-platform-tests style tree the
// way wptserve does, finding the testharness.js tests in it, loading each
// in a WebDriver session through wdext ([Runner], with wdext's own
// testharnessreport.js and testdriver.js), and turning testharness.js
// results into reports and an exit status. It never starts a browser
// itself: the sessions come from whatever WebDriver endpoint it is given.
//
// # Pieces
//
//   - [Server] serves a root directory on loopback under two hosts at once
//     (a main host and a cross-site alternate host, see [Options]), over
//     HTTP and optionally TLS, with wptserve's .headers files, .sub.
//     substitutions, ?pipe= pipes, the generated .any/.window/.worker
//     wrappers and native versions of a few Python handlers.
//     [Server.Mount] adds virtual paths (testharnessreport.js,
//     testdriver-vendor.js, control endpoints); [Static] makes a handler
//     from fixed bytes. [Server.WPTHosts] and [Server.SPKIHash] are what
//     an engine's capabilities need for its browser to reach and trust
//     it (package engine/kind, WPT); Options.Document lets an engine
//     rewrite the HTML documents it serves.
//   - [Discover] lists the tests under some paths the way WPT's manifest
//     does, with their timeouts; [FindRoot] finds the WPT root a path is
//     in (resources/testharness.js, or a [RootMarker] file), so test IDs do
//     not depend on which subdirectory is run.
//   - [FindTestharness] picks the testharness.js to serve: the tree's own,
//     else wpt-runner's pinned copy (a checkout's .cache/, or the per-user
//     cache [InstallTestharness] fills: `wdext setup`), checked by hash.
//   - [Runner] loads each test page, performs the testdriver actions the
//     page asks for (force_sample, click, send_keys) and collects the
//     harness result; a hung page is a TIMEOUT, a lost browser a CRASH.
//     With the result come what the test handed over for the HTML report
//     ([Result.Attachments]: test_driver.wdext_attach(kind, name, value),
//     and with [Runner.Capture] every trace a Profiler's stop() and every
//     measureUserAgentSpecificMemory() result in the test page) and the
//     spans of its force_sample() calls ([Result.Forced]), which package
//     report draws (`wdext wpt --html`).
//   - [ParseHarnessResult] decodes testharness.js's completion payload into a
//     [Result]; [Expectations] says which results are unexpected;
//     [WriteWPTReport], [WriteJUnit], [WriteSummary], [Progress] and
//     [ExitCode] report them.
//
// # Rules
//
//   - The server answers only on loopback, under two hosts that are
//     cross-site to each other; with Options.HTTPS its certificates are
//     made in memory, trusted by the sessions through capabilities, never
//     installed on the machine.
//   - A Python handler it does not implement natively is never served as
//     source: the request is answered 501 naming it, and the runner
//     reports it with the test.
//   - The server reads only regular files (symlinks followed, also out of
//     the tree): a device, FIFO or socket is answered 404 unopened. Files
//     stream (Range, HEAD); what it holds in memory for one response (a
//     file it rewrites, substitution output) is at most 32 MiB, and a
//     substitution stops when the client leaves.
//   - The testharness.js served is the tree's own, else a pinned copy
//     checked by hash.
//   - A result is unexpected only against the expectations given; the
//     exit status is 0 when every result was expected.
//
// Hosts and ports, what is supported compared with wptserve and WPT's
// manifest, hostile trees and resource bounds, and the expectation
// formats: docs/wpt.md.
package wpt
