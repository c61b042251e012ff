package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wdext/wdext/wpt"
)

// parseInterleaved parses the flags in args wherever they are (Go's flag
// package stops at the first non-flag) and returns the other arguments;
// "--" ends the flags. A flag's value is the next argument unless the flag
// is boolean or written -name=value.
func parseInterleaved(fs *flag.FlagSet, args []string) (positional []string) {
	var flags []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if strings.Contains(name, "=") {
			continue
		}
		fl := fs.Lookup(name)
		if fl == nil {
			continue // fs.Parse reports it
		}
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	fs.Parse(flags) // ExitOnError: a bad flag exits 2 with the reason and the usage
	return append(positional, fs.Args()...)
}

// selectTests finds the WPT root (rootFlag, or the one the paths are in)
// and the tests the paths name. Errors name the paths as typed.
func selectTests(rootFlag string, paths []string) (root string, tests []wpt.Test, err error) {
	typed := map[string]string{} // root-relative path → as typed
	var rels []string
	add := func(rel, p string) {
		if _, ok := typed[rel]; !ok {
			typed[rel] = p
		}
		rels = append(rels, rel)
	}
	if rootFlag != "" {
		if root, err = filepath.Abs(rootFlag); err != nil {
			return "", nil, err
		}
		if fi, err := os.Stat(root); err != nil {
			return "", nil, fmt.Errorf("--wpt-root %s: %w", rootFlag, unwrapPath(err))
		} else if !fi.IsDir() {
			return "", nil, fmt.Errorf("--wpt-root %s: not a directory", rootFlag)
		}
		for _, p := range paths {
			rel, err := underRoot(root, rootFlag, p)
			if err != nil {
				return "", nil, err
			}
			add(rel, p)
		}
	} else {
		rootOf := ""
		for _, p := range paths {
			r, err := rootFor(p)
			if err != nil {
				return "", nil, err
			}
			if root == "" {
				root, rootOf = r, p
			} else if r != root {
				return "", nil, fmt.Errorf("%s and %s are in different WPT roots (%s, %s): run them apart, or give --wpt-root", rootOf, p, root, r)
			}
			abs, err := filepath.Abs(p)
			if err != nil {
				return "", nil, err
			}
			rel, err := filepath.Rel(root, abs)
			if err != nil {
				return "", nil, err
			}
			add(filepath.ToSlash(rel), p)
		}
	}
	tests, err = wpt.Discover(root, rels)
	var pe *wpt.PathError
	if errors.As(err, &pe) {
		p := typed[pe.Path]
		if p == "" {
			p = pe.Path
		}
		if rootFlag != "" && !filepath.IsAbs(p) {
			return "", nil, fmt.Errorf("%s: %v (in --wpt-root %s)", p, pe.Err, rootFlag)
		}
		return "", nil, fmt.Errorf("%s: %v", p, pe.Err)
	}
	return root, tests, err
}

// rootFor is the WPT root of p without --wpt-root: the marked one above
// it, else p itself (a directory) or p's directory (a file).
func rootFor(p string) (string, error) {
	r, err := wpt.FindRoot(p)
	if err != nil || r != "" {
		return r, err
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		// Maybe a test URL (a.any.worker.html, a.html?x) in a tree without
		// marker: its directory, if that exists.
		if fi, derr := os.Stat(filepath.Dir(abs)); derr == nil && fi.IsDir() && !strings.HasSuffix(p, string(filepath.Separator)) {
			return filepath.Dir(abs), nil
		}
		return "", fmt.Errorf("%s: %w", p, wpt.ErrNoSuchTest)
	case fi.IsDir():
		return abs, nil
	default:
		return filepath.Dir(abs), nil
	}
}

// underRoot makes p, as typed with --wpt-root, relative to root: a path
// below the root (as WPT's own command takes them, with or without a
// leading /), or a file name inside it (relative to the working directory,
// or absolute).
func underRoot(root, rootFlag, p string) (string, error) {
	inside := func(abs string) (string, bool) {
		rel, err := filepath.Rel(root, abs)
		if err != nil || !(rel == "." || filepath.IsLocal(rel)) {
			return "", false
		}
		return filepath.ToSlash(rel), true
	}
	if filepath.IsAbs(p) {
		if rel, ok := inside(p); ok {
			return rel, nil
		}
		if _, err := os.Stat(p); err == nil {
			return "", fmt.Errorf("%s: not inside --wpt-root %s", p, rootFlag)
		}
		return p, nil // a URL path, /dir/test.html
	}
	if _, err := os.Stat(filepath.Join(root, p)); err == nil && filepath.IsLocal(p) {
		return filepath.ToSlash(p), nil
	}
	if abs, err := filepath.Abs(p); err == nil {
		if _, err := os.Stat(abs); err == nil {
			if rel, ok := inside(abs); ok {
				return rel, nil
			}
			return "", fmt.Errorf("%s: not inside --wpt-root %s", p, rootFlag)
		}
	}
	return filepath.ToSlash(p), nil // a test URL, or nothing: Discover says
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
