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
//     from fixed bytes. [ChromeCapabilities] and [WebKitGTKCapabilities]
//     are what a browser session needs to reach and trust it;
//     Options.Document lets a browser engine rewrite the HTML documents
//     it serves (wdext wpt tells WebKitGTK's Profiler polyfill each
//     document's Document-Policy that way).
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
// # Hosts and ports
//
// Real WPT runs use web-platform.test, its subdomains (www, www1, www2,
// élève, 天気の良い日) and not-web-platform.test with the same subdomains.
// [Server] has two ways to name its hosts.
//
// With Options.WPTHosts it uses those names as wptserve does: {{host}} is
// web-platform.test, {{domains[www1]}} www1.web-platform.test,
// {{domains[élève]}} xn--lve-6lad.web-platform.test (IDNA, as wptserve's
// config), {{hosts[alt][www2]}} www2.not-web-platform.test and
// {{domains[nonexistent]}} nonexistent.web-platform.test. The www hosts are
// same-site but cross-origin to the main host, the alt ones cross-site, and
// /common/get-host-info.sub.js works unchanged. The browser must resolve
// the names to 127.0.0.1 itself: [ChromeCapabilities] gives Chromium
// wptrunner's --host-resolver-rules (the nonexistent ones fail to resolve,
// as in WPT); no /etc/hosts edit is needed. WebKitGTK has no such switch
// (see [WebKitGTKCapabilities]): it needs the loopback mode below, unless
// the machine's /etc/hosts maps the names.
//
// Otherwise (the default) the names map onto the two loopback names every
// browser resolves without help:
//
//	{{host}}, {{domains[]}}, {{hosts[][]}}       main host (127.0.0.1 by default)
//	{{domains[www]}}, [www1], [www2], [élève],
//	[天気の良い日], {{hosts[][www…]}}            alternate host (localhost by default)
//	{{hosts[alt][]}}, {{hosts[alt][www…]}}       alternate host
//	{{domains[nonexistent]}}                     nonexistent.invalid (never resolves, as in WPT)
//
// There WPT's www hosts are cross-site as well as cross-origin, which is the
// stricter of the two properties, and same-site cross-origin cases cannot
// exist. Beware: /common/get-host-info.sub.js builds REMOTE_HOST in
// JavaScript as "www1." + {{host}} unless {{host}} is "localhost", in which
// case it uses "127.0.0.1". With the default main host (127.0.0.1)
// REMOTE_ORIGIN and friends therefore point at "www1.127.0.0.1", which does
// not resolve. Set Options.MainHost to "localhost" to get WPT's own
// loopback arrangement.
//
// Each host has its own listeners, all on 127.0.0.1, and every listener
// answers for every one of the server's host names, so a URL built the WPT
// way, scheme://{{hosts[alt][]}}:{{ports[https][0]}}, reaches this server
// whatever host it names. As in wptserve, ports belong to schemes:
//
//	{{ports[http][0]}}, {{ports[http][1]}}       the main host's first and second HTTP port
//	                                             ([1] needs Options.SecondPort)
//	{{ports[https][i]}}, {{ports[wss][i]}}       its TLS ports with Options.HTTPS (as many
//	                                             as HTTP ports); without it, the HTTP
//	                                             ports, so that code picking a port from
//	                                             location.protocol keeps working
//	{{ports[ws][i]}}                             the HTTP ports: there is no WebSocket
//	                                             server, but a mounted handler may
//	                                             upgrade connections itself
//
// With Options.HTTPS, NewServer makes a throw-away CA in memory (ECDSA
// P-256) and a leaf it signs for every host name above (the nonexistent
// ones aside), localhost, 127.0.0.1 and ::1; nothing touches the disk or
// the system's trust store. [Server.SPKIHash] is the leaf key's hash that
// Chromium's --ignore-certificate-errors-spki-list takes (what
// [ChromeCapabilities] passes, as wptrunner does: unlike
// acceptInsecureCerts it covers workers too, and no other certificate);
// [Server.CA] is the CA for Go clients. [Server.URL] loads a test as
// wptrunner does: a .https. or .serviceworker. test from the first HTTPS
// port (when there is one), a .www. test from the www subdomain.
//
// Loopback origins are secure contexts in browsers, so without TLS, tests
// named .https. that only need a secure context (crossOriginIsolated,
// performance.profile, service workers) still run, over plain HTTP. WPT's
// host names are not: with Options.WPTHosts, use Options.HTTPS too.
//
// # Compared with wptserve
//
// Supported:
//   - static files below the root, GET and HEAD, Range requests; ".." paths
//     are refused; wptserve's rewrite of /resources/WebIDLParser.js to
//     webidl2's file
//   - content types by extension from wptserve's table (plus mjs and wasm);
//     anything else is application/octet-stream
//   - headers files as wptserve's load_headers reads them: the __dir__ file
//     of the file's own directory (not of its ancestors), then
//     <file>.headers; for each, a .sub.headers file is used instead of the
//     .headers one and is substituted (unescaped); values are appended, and
//     a Content-Type in them replaces the guessed one. The wrappers take
//     the .js file's; Python handlers take none
//   - .sub. in the file name: the sub pipe (HTML-escaped for html, htm, xht,
//     xhtml, xml and svg files, verbatim otherwise) runs before any ?pipe=
//   - substitutions: host, domains[…], hosts[…][…], ports[…][…],
//     location[server|scheme|host|hostname|port|path|pathname|query|href]
//     (href is an addition), headers[…], GET[…], header_or_default(name,
//     default), uuid(), file_hash(algorithm, path), url_base and $variables
//     ({{$id:uuid()}} … {{$id}}). Unknown names, keys or indexes fail the
//     request with a 500 naming the substitution, as wptserve does. Unlike
//     wptserve, spaces around the expression ({{ host }}) are accepted and
//     trailing garbage ({{host+1}}) is an error rather than ignored.
//   - pipes: sub([html|none]), header(name, value[, append]), status(code)
//   - generated wrappers: .any.html, .any.worker.html, .any.sharedworker.html,
//     .any.serviceworker.html, .any.worker.js, .window.html, .worker.html,
//     honouring // META: global, script, title and timeout, and the headers
//     files of the underlying .js file
//   - HTTPS (HTTP/1.1) on ports of its own, see above
//   - Python handlers, natively and for any method: /common/redirect.py
//     (location, status, enable-cors) and
//     /measure-memory/resources/redirect.py (with its COEP and CORP
//     headers), served whether or not the tree has the file; ?pipe= applies
//     to them. A .py file is never served as source: any other one that
//     exists is answered 501 naming it, and [Server.TakeUnsupported] lists
//     those requests for the runner to report. A redirect.py request
//     without a location, or with a status outside 100–999, is a 400,
//     where wptserve would fail otherwise.
//   - Mount: virtual paths served on every origin, ahead of the file tree;
//     no headers files or pipes are applied to them
//
// Not supported: Python handlers other than the above, .asis files,
// directory listings (and a directory's default*.py), the stash,
// HTTP/2, WebSocket and WebTransport servers, the pipes slice, trickle and
// gzip, module and shadowrealm .any variants, jsshell, and reftests.
//
// # Discovery compared with WPT's manifest
//
// A test is an .html, .htm, .xhtml or .xht file with a
// <script src="/resources/testharness.js">, or an .any.js, .window.js or
// .worker.js file. Files are skipped as WPT skips them: names starting with
// ".", MANIFEST*, META.yml, *.headers, *.ini, -manual/-visual/-crash files,
// crashtests/ directories, any resources/, support/ or tools/ directory, and
// the root's common/ directory. Reference files are not tests because they do
// not load testharness.js, which is the rule WPT applies too. Unlike WPT,
// files at the very top of the root count, so small trees work. HTML is read
// with a small tag scanner, not an HTML5 parser.
//
// # Expectations
//
// Two forms are read by [LoadExpectations]: a JSON file
//
//	{"/dir/test.html": {"status": "OK", "subtests": {"name": "FAIL"}}}
//
// and WPT metadata .ini files (a directory laid out like the test tree, or
// one file whose section names are absolute test paths). Of the metadata
// language only section headings, expected: and disabled: are used; the
// branches of conditional values ("if os == …: FAIL") are ignored and the
// unconditional default is taken, and __dir__.ini files are not read.
package wpt
