package wpt

import (
	"errors"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
)

func TestFindRoot(t *testing.T) {
	checkout := writeTree(t, map[string]string{"resources/testharness.js": "", "a/b/t.html": ""})
	marked := writeTree(t, map[string]string{RootMarker: "", "sub/t.html": ""})
	plain := writeTree(t, map[string]string{"sub/t.html": ""})
	for _, c := range []struct{ path, want string }{
		{filepath.Join(checkout, "a", "b", "t.html"), checkout},
		{filepath.Join(checkout, "a", "b"), checkout},
		{filepath.Join(checkout, "a", "nope", "x.any.worker.html"), checkout}, // need not exist
		{filepath.Join(checkout, "a", "b", "t.html", "below-a-file"), checkout},
		{checkout, checkout},
		{filepath.Join(marked, "sub"), marked},
		{filepath.Join(plain, "sub", "t.html"), ""},
	} {
		got, err := FindRoot(c.path)
		assert.NilError(t, err)
		assert.Equal(t, got, c.want, c.path)
	}
}

// Discover's errors name the path as it was given, with the reason.
func TestDiscoverPathError(t *testing.T) {
	root := writeTree(t, map[string]string{"d/support.js": "", "d/t.html": `<script src="/resources/testharness.js"></script>`})
	for _, c := range []struct {
		path string
		want error
	}{
		{"d/nope.html", ErrNoSuchTest},
		{"/d/nope.any.worker.html", ErrNoSuchTest},
		{"d/support.js", ErrNoTests},
	} {
		_, err := Discover(root, []string{"d/t.html", c.path})
		var pe *PathError
		assert.Assert(t, errors.As(err, &pe), "%s: %v", c.path, err)
		assert.Equal(t, pe.Path, c.path)
		assert.Assert(t, errors.Is(err, c.want), "%s: %v", c.path, err)
	}
}
