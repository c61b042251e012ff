package wpt

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// writeTree creates files (slash-separated names) under a temporary root.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	return root
}

// newTestServer serves files without listening, for requests sent straight
// to its ServeHTTP.
func newTestServer(t *testing.T, files map[string]string) *Server {
	t.Helper()
	s, err := NewServer(writeTree(t, files), Options{})
	assert.NilError(t, err)
	return s
}

// startServer serves files on loopback and stops when the test ends.
func startServer(t *testing.T, files map[string]string, opts Options) *Server {
	t.Helper()
	s, err := NewServer(writeTree(t, files), opts)
	assert.NilError(t, err)
	assert.NilError(t, s.Start(context.Background()))
	t.Cleanup(func() { assert.Check(t, s.Close()) })
	return s
}

// serve sends one request for target (an absolute URL, whose host becomes
// the Host header) straight to h, with header lines "Name: value".
func serve(h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for _, line := range header {
		name, value, _ := strings.Cut(line, ":")
		r.Header.Add(name, strings.TrimSpace(value))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}
