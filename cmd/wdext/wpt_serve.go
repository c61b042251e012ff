package main

import (
	"context"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/wdext/wdext/engine/kind"
	"github.com/wdext/wdext/wpt"
)

const wptServeUsage = `usage: wdext wpt serve [flags] [PATH]
Serves a WPT tree as wdext wpt serves it to the --engine browser, for
opening tests by hand (WPT's ./wpt serve): WPT's host names when that
browser can be told to resolve them (else localhost and 127.0.0.1), two
HTTP and two HTTPS ports, HTTPS with a certificate made for this run,
wdext's testharnessreport.js and testdriver.js (testdriver actions wait for
a wdext wpt run, which is not there), and testharness.js as wdext wpt finds
it. It prints the URLs and how to start each browser wdext knows on them,
and serves until SIGINT or SIGTERM (exit status 0).

The root is --wpt-root, else the one PATH is in (found as wdext wpt finds
it), else the working directory's. PATH, a file or directory below the root
or a path in it, gets its URL printed. (A directory named serve is ./serve.)

flags:
`

// wptServeCmd is `wdext wpt serve`: the tree served as a run on the
// --engine kind would serve it, until a signal.
func wptServeCmd(args []string, kinds kind.List) (int, error) {
	fs := flag.NewFlagSet("wpt serve", flag.ExitOnError)
	rootFlag := fs.String("wpt-root", "", "the WPT root to serve (default: the one PATH, else the working directory, is in)")
	engine := fs.String("engine", kinds[0].Name, "serve as wdext wpt serves it to this browser: "+kinds.Names(", "))
	harness := fs.String("testharness", "", "testharness.js to serve (default: the tree's own, else wpt-runner's, as wdext wpt)")
	caFile := fs.String("ca-file", "", "write the throw-away CA of the HTTPS certificate to this file (PEM), for clients that take a CA (curl --cacert)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), wptServeUsage)
		fs.PrintDefaults()
	}
	paths := parseInterleaved(fs, args)
	if len(paths) > 1 {
		fmt.Fprintf(fs.Output(), "wdext wpt serve: one PATH at most, got %q\nrun wdext wpt serve -h for more\n", paths)
		return 2, nil
	}
	k, err := kinds.Find(*engine)
	if err != nil {
		return 2, err
	}
	root, rel, err := serveRoot(*rootFlag, paths)
	if err != nil {
		return 1, err
	}
	th, err := wpt.FindTestharness(*harness, root)
	if err != nil {
		return 1, err
	}
	srv, err := wpt.NewServer(root, serverOptions(k))
	if err != nil {
		return 1, err
	}
	defer srv.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Start(ctx); err != nil {
		return 1, err
	}
	// The runner's own files, as a run mounts them; no session is made.
	(&wpt.Runner{Server: srv, Testharness: th}).Mount()
	if *caFile != "" {
		ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.CA().Raw})
		if err := os.WriteFile(*caFile, ca, 0o644); err != nil {
			return 1, err
		}
	}
	target := ""
	if rel != "" {
		target = srv.URL("/" + rel)
	}
	printServed(os.Stdout, srv, root, k, kinds, target)
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "wdext wpt serve: stopping")
	return 0, srv.Close()
}

// serveRoot is the root to serve and PATH's slash-separated path below
// it ("" without PATH), found as wdext wpt finds them.
func serveRoot(rootFlag string, paths []string) (root, rel string, err error) {
	if rootFlag != "" {
		if root, err = filepath.Abs(rootFlag); err != nil {
			return "", "", err
		}
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			return "", "", fmt.Errorf("--wpt-root %s: not a directory", rootFlag)
		}
		if len(paths) == 0 {
			return root, "", nil
		}
		rel, err = underRoot(root, rootFlag, paths[0])
		return root, strings.TrimPrefix(rel, "/"), err
	}
	p := "."
	if len(paths) > 0 {
		p = paths[0]
	}
	if root, err = rootFor(p); err != nil {
		return "", "", err
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", "", err
	}
	if rel, err = filepath.Rel(root, abs); err != nil || rel == "." || len(paths) == 0 {
		return root, "", err
	}
	return root, filepath.ToSlash(rel), nil
}

// printServed says where the tree is served and how to start each
// registered browser on it.
func printServed(w io.Writer, srv *wpt.Server, root string, k kind.Kind, kinds kind.List, target string) {
	fmt.Fprintf(w, "wdext wpt serve: %s, as wdext wpt --engine %s serves it\n", root, k.Name)
	fmt.Fprintf(w, "  http:  %s/ and %s/\n", srv.Origin(), srv.Origin2())
	fmt.Fprintf(w, "  https: %s/ and %s/\n", srv.HTTPSOrigin(), srv.HTTPSOrigin2())
	fmt.Fprintf(w, "  cross-site: %s/, %s/ (every host answers on every port)\n", srv.AltOrigin(), srv.AltHTTPSOrigin())
	if target != "" {
		fmt.Fprintf(w, "  %s\n", target)
	}
	open := target
	if open == "" {
		open = srv.Origin() + "/"
	}
	fmt.Fprintf(w, "HTTPS: a certificate signed by a CA made for this run, whose key has the SPKI hash %s\n", srv.SPKIHash())
	names := ""
	if srv.WPTHosts() {
		names = "resolves WPT's host names and "
	}
	fmt.Fprintf(w, "Start a browser of its own (a new profile: a running one ignores new switches) that %strusts the certificate:\n", names)
	for _, b := range kinds {
		fmt.Fprintf(w, "  %s: %s\n", b.Name, browserHint(b, srv, open))
	}
	fmt.Fprintln(w, "Serving until SIGINT or SIGTERM (Ctrl-C).")
}

// browserHint is how to start kind b's browser on srv, from what its WPT
// capabilities ask of a session: the switches of any vendor options'
// "args", their "prefs" (Firefox's, set in about:config), and
// acceptInsecureCerts.
func browserHint(b kind.Kind, srv *wpt.Server, open string) string {
	if srv.WPTHosts() && !b.WPT.Hosts {
		return fmt.Sprintf("cannot be told to resolve WPT's host names: map them to 127.0.0.1 in /etc/hosts, or serve with --engine %s", b.Name)
	}
	if b.WPT.Capabilities == nil {
		return "no WPT capabilities known"
	}
	caps := b.WPT.Capabilities(servedBy(srv, false))
	var keys []string
	for key := range caps {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	line := []string{b.Name}
	var prefs []string // Firefox's, for about:config
	for _, key := range keys {
		opts, ok := caps[key].(map[string]any)
		if !ok || !strings.Contains(key, ":") {
			continue
		}
		if p, ok := opts["prefs"].(map[string]any); ok {
			for _, name := range slices.Sorted(maps.Keys(p)) {
				prefs = append(prefs, fmt.Sprintf("%s = %v", name, p[name]))
			}
		}
		switch args := opts["args"].(type) {
		case []string:
			line = append(line, args...)
		case []any:
			for _, a := range args {
				if s, ok := a.(string); ok {
					line = append(line, s)
				}
			}
		}
	}
	inProfile := ""
	if len(prefs) > 0 {
		inProfile = " in a profile whose about:config has " + strings.Join(prefs, ", ")
	}
	if len(line) == 1 && b.WPT.Profile == "" { // no switches to give
		hint := "open " + open + inProfile
		if caps["acceptInsecureCerts"] == true {
			hint += " (https: accept the certificate warning, or trust --ca-file's CA)"
		}
		return hint
	}
	line = append(line, open)
	hint := shellQuote(line)
	if b.WPT.Profile != "" {
		hint = b.Name + " " + shellQuote([]string{b.WPT.Profile}) + `"$(mktemp -d)"` + strings.TrimPrefix(hint, b.Name)
	}
	hint += inProfile
	if caps["acceptInsecureCerts"] == true {
		hint += " (and accept the certificate warning, or trust --ca-file's CA)"
	}
	return hint
}

// shellQuote joins words for a POSIX shell.
func shellQuote(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w != "" && !strings.ContainsFunc(w, func(r rune) bool {
			return !slices.Contains([]rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=/.:,+@%"), r)
		}) {
			out[i] = w
			continue
		}
		out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
