package wpt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// WPT's per-test timeouts (wptrunner's testharness defaults).
const (
	DefaultTimeout = 10 * time.Second
	LongTimeout    = 60 * time.Second
)

// Test is one testharness.js test page to load.
type Test struct {
	// URL is the path to load, with any variant ("/dir/a.any.worker.html?x");
	// it is also the test's id in reports and expectations.
	URL string
	// File is the source file, relative to the root, slash-separated.
	File string
	// LongTimeout is set by <meta name="timeout" content="long"> or
	// "// META: timeout=long".
	LongTimeout bool
	// Testdriver is set when the page loads /resources/testdriver.js.
	Testdriver bool
}

// Timeout is how long the test may run: 10 s, or 60 s for long tests, times
// multiplier (values <= 0 count as 1), like wptrunner's --timeout-multiplier.
func (t Test) Timeout(multiplier float64) time.Duration {
	d := DefaultTimeout
	if t.LongTimeout {
		d = LongTimeout
	}
	if multiplier > 0 {
		d = time.Duration(float64(d) * multiplier)
	}
	return d
}

// Discover finds the tests under paths, which are files, directories or
// test URLs (like "dir/a.any.worker.html") relative to root, with or without
// a leading "/"; an absolute file name inside root works too. No paths means
// the whole root. The result is sorted by URL and has no duplicates. A path
// that yields no test is an error, so typos do not pass silently: a
// *PathError naming the path as given, wrapping ErrNoSuchTest or ErrNoTests.
func Discover(root string, paths []string) ([]Test, error) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var tests []Test
	for _, p := range paths {
		name := p
		if r, err := filepath.Rel(absRoot, p); filepath.IsAbs(p) && err == nil && filepath.IsLocal(r) {
			name = r
		}
		rel := path.Clean("/" + filepath.ToSlash(name))[1:] // also drops ".." above the root
		if rel == "" {
			rel = "."
		}
		found, err := discoverPath(root, rel)
		if errors.Is(err, ErrNoSuchTest) {
			return nil, &PathError{Path: p, Err: ErrNoSuchTest}
		}
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, &PathError{Path: p, Err: ErrNoTests}
		}
		for _, t := range found {
			if !seen[t.URL] {
				seen[t.URL] = true
				tests = append(tests, t)
			}
		}
	}
	slices.SortFunc(tests, func(a, b Test) int { return strings.Compare(a.URL, b.URL) })
	return tests, nil
}

func discoverPath(root, rel string) ([]Test, error) {
	fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return discoverURL(root, rel)
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return testsInFile(root, rel)
	}
	var tests []Test
	err = fs.WalkDir(os.DirFS(root), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != rel && (strings.HasPrefix(d.Name(), ".") || nonTestDir(p)) {
				return fs.SkipDir
			}
			return nil
		}
		found, err := testsInFile(root, p)
		tests = append(tests, found...)
		return err
	})
	return tests, err
}

// discoverURL handles a path naming a test URL rather than a file: a
// generated wrapper (a.any.worker.html) or a page with a variant (a.html?x).
func discoverURL(root, rel string) ([]Test, error) {
	want := "/" + rel
	file := stripVariant(rel)
	sources := []string{file}
	for _, w := range wrappers {
		if strings.HasSuffix(file, w.suffix) {
			sources = append(sources, strings.TrimSuffix(file, w.suffix)+w.source)
		}
	}
	for _, src := range sources {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(src))); err != nil {
			continue
		}
		all, err := testsInFile(root, src)
		if err != nil {
			return nil, err
		}
		var out []Test
		for _, t := range all {
			// A URL without a variant selects all of its variants.
			if t.URL == want || (file == rel && stripVariant(t.URL) == want) {
				out = append(out, t)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	return nil, ErrNoSuchTest
}

// Discover's reasons for finding no test at a path.
var (
	ErrNoSuchTest = errors.New("no such file or test")
	ErrNoTests    = errors.New("no tests there (a test loads /resources/testharness.js, or is an .any.js, .window.js or .worker.js file)")
)

// A PathError is a path Discover found no test at, as it was given.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string { return "wpt: " + e.Path + ": " + e.Err.Error() }

func (e *PathError) Unwrap() error { return e.Err }

// nonTestDir reports whether files under the slash-separated directory dir
// are support files by WPT's rules.
func nonTestDir(dir string) bool {
	parts := strings.Split(dir, "/")
	if parts[0] == "common" {
		return true
	}
	for _, prefix := range [][]string{{"css21", "archive"}, {"css", "CSS2", "archive"}, {"css", "common"}} {
		if len(parts) >= len(prefix) && slices.Equal(parts[:len(prefix)], prefix) {
			return true
		}
	}
	for _, p := range parts {
		switch p {
		case "resources", "support", "tools", "crashtests":
			return true
		}
		if strings.HasPrefix(p, ".") && p != "." {
			return true
		}
	}
	return false
}

// testsInFile returns the tests a file defines, none for support files.
func testsInFile(root, rel string) ([]Test, error) {
	name := path.Base(rel)
	ext := path.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	if skipFileName(name, stem) || (path.Dir(rel) != "." && nonTestDir(path.Dir(rel))) {
		return nil, nil
	}
	switch ext {
	case ".js", ".html", ".htm", ".xhtml", ".xht":
	default:
		return nil, nil
	}
	src, err := readRegular(filepath.Join(root, filepath.FromSlash(rel)), maxBuffered)
	if errors.Is(err, errNotRegular) {
		return nil, nil // a device, FIFO or socket: never read, never a test
	}
	if err != nil {
		return nil, err
	}
	if ext != ".js" {
		f := scanHTML(src)
		if !f.testharness {
			return nil, nil
		}
		base := Test{URL: "/" + rel, File: rel, LongTimeout: f.long, Testdriver: f.testdriver}
		return withVariants(base, f.variants)
	}

	meta := readScriptMeta(src)
	base := Test{File: rel}
	var variants []string
	for _, m := range meta {
		switch {
		case m.key == "timeout" && m.value == "long":
			base.LongTimeout = true
		case m.key == "script" && m.value == "/resources/testdriver.js":
			base.Testdriver = true
		case m.key == "variant":
			variants = append(variants, m.value)
		}
	}
	flags := strings.Split(stem, ".")[1:]
	var urls []string
	switch {
	case slices.Contains(flags, "any"):
		global, _ := metaValue(meta, "global")
		withoutAny := strings.TrimSuffix(strings.ReplaceAll(rel, ".any.", "."), ".js")
		for g := range parseGlobals(global) {
			urls = append(urls, "/"+withoutAny+anyGlobals[g])
		}
		slices.Sort(urls)
	case slices.Contains(flags, "worker"):
		urls = []string{"/" + strings.TrimSuffix(rel, ".worker.js") + ".worker.html"}
	case slices.Contains(flags, "window"):
		urls = []string{"/" + strings.TrimSuffix(rel, ".window.js") + ".window.html"}
	}
	var tests []Test
	for _, u := range urls {
		t := base
		t.URL = u
		vs, err := withVariants(t, variants)
		if err != nil {
			return nil, err
		}
		tests = append(tests, vs...)
	}
	return tests, nil
}

// skipFileName applies WPT's name rules for files that are never tests.
func skipFileName(name, stem string) bool {
	if strings.HasPrefix(name, ".") || strings.HasPrefix(stem, "MANIFEST") || name == "META.yml" ||
		strings.HasSuffix(name, ".headers") || strings.HasSuffix(name, ".ini") {
		return true
	}
	// WPT's type flag: the part after the last "-" of the name, up to a dot.
	if i := strings.LastIndexByte(stem, '-'); i >= 0 {
		flag, _, _ := strings.Cut(stem[i+1:], ".")
		switch flag {
		case "manual", "visual", "crash":
			return true
		}
	}
	return false
}

// withVariants expands a test into one per variant (?query or #fragment).
func withVariants(t Test, variants []string) ([]Test, error) {
	if len(variants) == 0 {
		return []Test{t}, nil
	}
	out := make([]Test, 0, len(variants))
	for _, v := range variants {
		if v != "" && v[0] != '?' && v[0] != '#' {
			return nil, fmt.Errorf("wpt: %s: variant %q must start with ? or #", t.File, v)
		}
		vt := t
		vt.URL += v
		out = append(out, vt)
	}
	return out, nil
}

func stripVariant(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		return u[:i]
	}
	return u
}
