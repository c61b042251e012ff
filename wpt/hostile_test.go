package wpt

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
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

// bigFile makes a sparse file of size bytes under root, "0123456789" first.
func bigFile(t *testing.T, root, name string, size int64) {
	t.Helper()
	f, err := os.Create(filepath.Join(root, name))
	assert.NilError(t, err)
	_, err = f.WriteString("0123456789")
	assert.NilError(t, err)
	assert.NilError(t, f.Truncate(size))
	assert.NilError(t, f.Close())
}

// allocated is how many bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Issue 28, finding 2: HEAD and Range on a 200 MB file read only what
// they send (before, every request read the whole file: +300 MB each),
// with the file's .headers and header/status pipes applied as before.
func TestBigFileHeadAndRange(t *testing.T) {
	const size = 200 << 20
	s, err := NewServer(writeTree(t, map[string]string{"big.webm.headers": "X-From-Headers: yes\n"}),
		Options{ErrorLog: log.New(io.Discard, "", 0)})
	assert.NilError(t, err)
	bigFile(t, s.root, "big.webm", size)

	var w *httptest.ResponseRecorder
	n := allocated(func() { w = serve(s, "GET", mainURL+"/big.webm", "Range: bytes=0-9") })
	assert.Check(t, is.Equal(w.Code, 206))
	assert.Check(t, is.Equal(w.Body.String(), "0123456789"))
	assert.Check(t, is.Equal(w.Header().Get("Content-Range"), fmt.Sprintf("bytes 0-9/%d", size)))
	assert.Check(t, is.Equal(w.Header().Get("Content-Type"), "video/webm"))
	assert.Check(t, is.Equal(w.Header().Get("X-From-Headers"), "yes"))
	assert.Check(t, n < 1<<20, "Range allocated %d bytes", n)

	n = allocated(func() { w = serve(s, "HEAD", mainURL+"/big.webm") })
	assert.Check(t, is.Equal(w.Code, 200))
	assert.Check(t, is.Equal(w.Header().Get("Content-Length"), strconv.Itoa(size)))
	assert.Check(t, is.Equal(w.Body.Len(), 0))
	assert.Check(t, n < 1<<20, "HEAD allocated %d bytes", n)

	n = allocated(func() {
		w = serve(s, "GET", mainURL+"/big.webm?pipe=header(X-Pipe,1)|header(Content-Type,video/mp4)", "Range: bytes=5-9")
	})
	assert.Check(t, is.Equal(w.Code, 206))
	assert.Check(t, is.Equal(w.Body.String(), "56789"))
	assert.Check(t, is.Equal(w.Header().Get("X-Pipe"), "1"))
	assert.Check(t, is.Equal(w.Header().Get("Content-Type"), "video/mp4"))
	assert.Check(t, n < 1<<20, "Range with pipes allocated %d bytes", n)

	n = allocated(func() { w = serve(s, "HEAD", mainURL+"/big.webm?pipe=status(404)") })
	assert.Check(t, is.Equal(w.Code, 404))
	assert.Check(t, is.Equal(w.Header().Get("Content-Length"), strconv.Itoa(size)))
	assert.Check(t, n < 1<<20, "HEAD with status allocated %d bytes", n)

	// A file's fd is not kept once it has been answered, nor on an error.
	before := openFDs(t)
	for range 20 {
		serve(s, "GET", mainURL+"/big.webm", "Range: bytes=0-0")
		serve(s, "GET", mainURL+"/big.webm?pipe=nope")
	}
	assert.Check(t, is.Equal(openFDs(t), before))
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// leavingClient is a request context whose client leaves after it has been
// asked n times whether it is still there.
type leavingClient struct {
	context.Context
	n, asked int
}

func (c *leavingClient) Err() error {
	c.asked++
	if c.asked > c.n {
		return context.Canceled
	}
	return nil
}

// Issue 28, finding 3: a .sub. file's output is bounded (maxBuffered, a
// 500 beyond) and its expansion stops when the client leaves. Before, 1M
// {{GET[x]}} with a 10 KB x grew to 19 GB; here 4000 make 40 MB.
func TestSubBoundedAndCancelled(t *testing.T) {
	var logged strings.Builder
	s, err := NewServer(writeTree(t, map[string]string{
		"many.sub.txt":  strings.Repeat("{{GET[x]}}", 4000), // 40 MB with x
		"some.sub.html": strings.Repeat("<p>{{GET[x]}}</p>\n", 1000),
	}), Options{ErrorLog: log.New(&logged, "", 0)})
	assert.NilError(t, err)
	x := strings.Repeat("a", 10<<10)

	var w *httptest.ResponseRecorder
	n := allocated(func() { w = serve(s, "GET", mainURL+"/many.sub.txt?x="+x) })
	assert.Check(t, is.Equal(w.Code, 500))
	assert.Check(t, is.Contains(w.Body.String(), "the output passed 32 MiB"))
	// What append's growth leaves behind, up to the bound: not the 40 MB
	// output and its copies.
	assert.Check(t, n < 8*maxBuffered, "allocated %d bytes", n)

	// Under the bound it is answered as before.
	w = serve(s, "GET", mainURL+"/some.sub.html?x=<"+x[:100])
	assert.Check(t, is.Equal(w.Code, 200))
	assert.Check(t, is.Equal(w.Body.Len(), 1000*len("<p>&lt;"+x[:100]+"</p>\n")))

	// The client leaves after 10 substitutions: the 990 others are not
	// made, nothing is answered and nothing logged.
	logged.Reset()
	ctx := &leavingClient{Context: context.Background(), n: 10}
	r := httptest.NewRequestWithContext(ctx, "GET", mainURL+"/some.sub.html?x=1", nil)
	w = httptest.NewRecorder()
	s.ServeHTTP(w, r)
	assert.Check(t, is.Equal(w.Body.Len(), 0), "%.100s", w.Body)
	assert.Check(t, ctx.asked < 20, "the context was asked %d times: the expansion went on", ctx.asked)
	assert.Check(t, is.Equal(logged.String(), ""))
}

// Issue 28, finding 5: pipe=status(1xx) is refused with a 500, as any bad
// pipe is: a 1xx is no final answer (a 101 left the client hanging).
func TestPipeStatusInformationalRefused(t *testing.T) {
	s, err := NewServer(writeTree(t, map[string]string{"a.txt": "a"}), Options{ErrorLog: log.New(io.Discard, "", 0)})
	assert.NilError(t, err)
	for _, code := range []string{"100", "101", "103", "199"} {
		w := serve(s, "GET", mainURL+"/a.txt?pipe=status("+code+")")
		assert.Check(t, is.Equal(w.Code, 500), code)
		assert.Check(t, is.Contains(w.Body.String(), "status "+code+" is informational (1xx)"), code)
	}
	for code, want := range map[string]int{"200": 200, "204": 204, "404": 404, "599": 599} {
		assert.Check(t, is.Equal(serve(s, "GET", mainURL+"/a.txt?pipe=status("+code+")").Code, want), code)
	}
}

// Issue 28, finding 4: symlinks out of the tree are followed, as wptserve
// follows them (docs/wpt.md, "Hostile trees"): a link to a file or a
// directory elsewhere is the tree's content. Only regular files are
// served through them, and a URL still cannot leave the root.
func TestSymlinksOutOfTheTree(t *testing.T) {
	outside := writeTree(t, map[string]string{"file.txt": "outside file", "dir/inner.html": "outside dir", "secret.txt": "secret"})
	s, err := NewServer(writeTree(t, map[string]string{"in/a.txt": "a"}), Options{ErrorLog: log.New(io.Discard, "", 0)})
	assert.NilError(t, err)
	assert.NilError(t, os.Symlink(filepath.Join(outside, "file.txt"), filepath.Join(s.root, "in", "link.txt")))
	assert.NilError(t, os.Symlink(filepath.Join(outside, "dir"), filepath.Join(s.root, "linked")))
	assert.NilError(t, os.Symlink("/dev/zero", filepath.Join(outside, "dir", "zero.bin")))

	for p, want := range map[string]string{"/in/link.txt": "outside file", "/linked/inner.html": "outside dir"} {
		w := serve(s, "GET", mainURL+p)
		assert.Check(t, is.Equal(w.Code, 200), p)
		assert.Check(t, is.Equal(w.Body.String(), want), p)
	}
	w := serve(s, "GET", mainURL+"/linked/zero.bin")
	assert.Check(t, is.Equal(w.Code, 404))
	assert.Check(t, is.Contains(w.Body.String(), "not a regular file"))
	// The link names the directory; the URL cannot climb out of it.
	rel, err := filepath.Rel(s.root, filepath.Join(outside, "secret.txt"))
	assert.NilError(t, err)
	for _, p := range []string{"/linked/../" + filepath.Base(outside) + "/secret.txt", "/" + filepath.ToSlash(rel), "/linked/%2e%2e/secret.txt"} {
		assert.Check(t, is.Equal(serve(s, "GET", mainURL+p).Code, 404), p)
	}
}
