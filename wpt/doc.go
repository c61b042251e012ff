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
//     (a main host and a cross-site alternate host, see [Options]) with
//     wptserve's .headers files, .sub. substitutions, ?pipe= pipes and the
//     generated .any/.window/.worker wrappers. [Server.Mount] adds virtual
//     paths (testharnessreport.js, testdriver-vendor.js, control endpoints);
//     [Static] makes a handler from fixed bytes.
//   - [Discover] lists the tests under some paths the way WPT's manifest
//     does, with their timeouts.
//   - [Runner] loads each test page, performs the testdriver actions the
//     page asks for (force_sample, click, send_keys) and collects the
//     harness result; a hung page is a TIMEOUT, a lost browser a CRASH.
//   - [ParseHarnessResult] decodes testharness.js's completion payload into a
//     [Result]; [Expectations] says which results are unexpected;
//     [WriteWPTReport], [WriteJUnit], [WriteSummary], [Progress] and
//     [ExitCode] report them.
//
// # Hosts and ports
//
// Real WPT runs use web-platform.test, its subdomains (www, www1, www2,
// élève, 天気の良い日) and not-web-platform.test, all resolved through
// /etc/hosts. None of those resolve here, so substitutions map them onto the
// two loopback names every browser resolves without help:
//
//	{{host}}, {{domains[]}}, {{hosts[][]}}       main host (127.0.0.1 by default)
//	{{domains[www]}}, [www1], [www2], [élève],
//	[天気の良い日], {{hosts[][www…]}}            alternate host (localhost by default)
//	{{hosts[alt][]}}, {{hosts[alt][www…]}}       alternate host
//	{{domains[nonexistent]}}                     nonexistent.invalid (never resolves, as in WPT)
//
// WPT's www hosts are same-site but cross-origin to the main host; here they
// are cross-site as well, which is the stricter of the two properties.
//
// Beware: /common/get-host-info.sub.js builds REMOTE_HOST in JavaScript as
// "www1." + {{host}} unless {{host}} is "localhost", in which case it uses
// "127.0.0.1". With the default main host (127.0.0.1) REMOTE_ORIGIN and
// friends therefore point at "www1.127.0.0.1", which does not resolve. Set
// Options.MainHost to "localhost" to get WPT's own loopback arrangement.
//
// Every listener answers for every loopback host name, so a URL built the
// WPT way, scheme://{{hosts[alt][]}}:{{ports[http][0]}}, reaches this server
// even though the alternate host also has listeners of its own.
//
//	{{ports[http][0]}}, {{ports[http][1]}}       the main host's first and second port
//	                                             ([1] needs Options.SecondPort)
//	{{ports[https][i]}}, {{ports[wss][i]}}       the same HTTP ports: there is no TLS.
//	                                             Code that picks a port from
//	                                             location.protocol keeps working; URLs
//	                                             that hard-code https:// will not connect.
//	{{ports[ws][i]}}                             the same HTTP ports: there is no
//	                                             WebSocket server, but a mounted handler
//	                                             may upgrade connections itself.
//
// Loopback origins are secure contexts in browsers, so tests named .https.
// that only need a secure context (crossOriginIsolated, performance.profile,
// service workers) run over plain HTTP.
//
// # Compared with wptserve
//
// Supported:
//   - static files below the root, GET and HEAD, Range requests; ".." paths
//     are refused
//   - content types by extension from wptserve's table (plus mjs and wasm);
//     anything else is application/octet-stream
//   - headers from the sibling __dir__.headers (same directory only, not
//     ancestors, as in wptserve) then <file>.headers; a .sub.headers file is
//     used instead of the .headers one and is substituted; values are
//     appended, and a Content-Type in them replaces the guessed one
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
//   - Mount: virtual paths served on every origin, ahead of the file tree;
//     no headers files or pipes are applied to them
//
// Not supported: Python handlers (*.py), .asis files, directory listings,
// the stash, TLS/HTTP2/WebSockets/WebTransport servers, the pipes slice,
// trickle and gzip, module and shadowrealm .any variants, jsshell, the
// .https. URL forcing of service worker variants, and reftests.
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
