package wpt

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// Issue 28, finding 1: a device, a FIFO or a socket in the tree, directly
// or through a symlink (also one out of the tree), is answered 404 at
// once and never opened: before, /dev/zero was read into memory and a
// FIFO held a thread and an fd forever. The same for a .headers file and
// a wrapper's .js source, and discovery skips them.
func TestNotRegularFiles(t *testing.T) {
	s := newTestServer(t, map[string]string{
		"a.html":   "a",
		"ok.html":  "<script src=/resources/testharness.js></script>",
		"b.any.js": "test(() => {});",
	})
	root, outside := s.root, t.TempDir()
	mkfifo := func(name string) string {
		t.Helper()
		assert.NilError(t, syscall.Mkfifo(name, 0o644))
		return name
	}
	mkfifo(filepath.Join(root, "fifo.html"))
	mkfifo(filepath.Join(root, "a.html.headers"))
	mkfifo(filepath.Join(root, "f.any.js"))
	assert.NilError(t, os.Symlink(mkfifo(filepath.Join(outside, "fifo")), filepath.Join(root, "fifo-out.html")))
	assert.NilError(t, os.Symlink("/dev/null", filepath.Join(root, "null.html")))
	assert.NilError(t, os.Symlink("/dev/zero", filepath.Join(root, "zero.bin")))
	l, err := net.Listen("unix", filepath.Join(root, "sock.html"))
	assert.NilError(t, err)
	defer l.Close()

	for _, p := range []string{"/fifo.html", "/fifo-out.html", "/null.html", "/zero.bin", "/sock.html",
		"/a.html", "/f.any.html", "/f.any.worker.html"} {
		for _, method := range []string{"GET", "HEAD"} {
			w := serve(s, method, mainURL+p)
			assert.Check(t, is.Equal(w.Code, 404), "%s %s: %s", method, p, w.Body)
			if method == "GET" {
				assert.Check(t, is.Contains(w.Body.String(), "not a regular file"), "%s %s", method, p)
			}
		}
	}
	assert.Check(t, is.Equal(serve(s, "GET", mainURL+"/b.any.html").Code, 200))
	assert.Check(t, is.Equal(serve(s, "GET", mainURL+"/ok.html").Code, 200))

	// file_hash() of one is an error, not a read.
	assert.NilError(t, os.WriteFile(filepath.Join(root, "h.sub.txt"), []byte("{{file_hash(sha256, zero.bin)}}"), 0o644))
	w := serve(s, "GET", mainURL+"/h.sub.txt")
	assert.Check(t, is.Equal(w.Code, 500))
	assert.Check(t, is.Contains(w.Body.String(), "not a regular file"))

	tests, err := Discover(root, nil)
	assert.NilError(t, err)
	var urls []string
	for _, tt := range tests {
		urls = append(urls, tt.URL)
	}
	assert.Check(t, is.Equal(strings.Join(urls, " "), "/b.any.html /b.any.worker.html /ok.html"))
}
