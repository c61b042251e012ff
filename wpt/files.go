package wpt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// httpError is a failure with the status the client should see.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return strconv.Itoa(e.code) + " " + e.msg }

func notFound(format string, args ...any) error {
	return &httpError{code: http.StatusNotFound, msg: fmt.Sprintf(format, args...)}
}

// notRegular answers for a device, a FIFO or a socket (or a symlink to
// one) without opening it: 404, as wptserve answers every path it
// cannot read as a file (its handlers turn any OSError into a 404).
func notRegular(name string) error {
	return notFound("%s: not a regular file (wdext's WPT server never reads a device, FIFO or socket)", name)
}

// contentTypes is wptserve's table (constants.py) plus mjs and wasm.
var contentTypes = map[string]string{
	"json": "application/json", "wasm": "application/wasm",
	"xht": "application/xhtml+xml", "xhtm": "application/xhtml+xml", "xhtml": "application/xhtml+xml",
	"xml": "application/xml", "xpi": "application/x-xpinstall",
	"m4a": "audio/mp4", "mp3": "audio/mpeg", "oga": "audio/ogg", "weba": "audio/webm", "wav": "audio/x-wav",
	"bmp": "image/bmp", "gif": "image/gif", "jpg": "image/jpeg", "jpeg": "image/jpeg",
	"png": "image/png", "svg": "image/svg+xml",
	"manifest": "text/cache-manifest", "css": "text/css", "event_stream": "text/event-stream",
	"htm": "text/html", "html": "text/html", "js": "text/javascript", "mjs": "text/javascript",
	"txt": "text/plain", "md": "text/plain", "vtt": "text/vtt",
	"mp4": "video/mp4", "m4v": "video/mp4", "ogg": "video/ogg", "ogv": "video/ogg", "webm": "video/webm",
}

func contentType(name string) string {
	if ct, ok := contentTypes[strings.TrimPrefix(path.Ext(name), ".")]; ok {
		return ct
	}
	return "application/octet-stream"
}

// markupExts get HTML-escaped substitutions when named .sub.
var markupExts = map[string]bool{".html": true, ".htm": true, ".xht": true, ".xhtml": true, ".xml": true, ".svg": true}

// fileServer builds responses for files below root, and for the wrappers
// generated around .js tests.
type fileServer struct {
	root string
	site *site
}

func (fsrv *fileServer) build(r *http.Request) (*response, error) {
	rel, ok := relPath(r.URL.Path)
	if !ok {
		return nil, notFound("%s: not found", r.URL.Path)
	}
	if w, ok := wrapperFor(rel); ok {
		resp, err := fsrv.wrapped(r, rel, w)
		if !errors.Is(err, fs.ErrNotExist) {
			return resp, err
		}
		// No .js source: a real file of that name may still exist.
	}
	return fsrv.file(r, rel)
}

// relPath turns a URL path into a slash-separated path below the root;
// like wptserve it refuses any path containing "..".
func relPath(urlPath string) (string, bool) {
	if strings.Contains(urlPath, "..") || !strings.HasPrefix(urlPath, "/") {
		return "", false
	}
	rel := path.Clean(urlPath)[1:]
	return rel, rel != ""
}

func (fsrv *fileServer) osPath(rel string) string {
	return filepath.Join(fsrv.root, filepath.FromSlash(rel))
}

func (fsrv *fileServer) file(r *http.Request, rel string) (*response, error) {
	name := fsrv.osPath(rel)
	f, fi, err := openRegular(name)
	switch {
	case fi != nil && fi.IsDir():
		return nil, notFound("%s: directory listings are not served", r.URL.Path)
	case errors.Is(err, errNotRegular):
		return nil, notRegular(r.URL.Path)
	case errors.Is(err, fs.ErrNotExist):
		return nil, notFound("%s: not found", r.URL.Path)
	case err != nil:
		return nil, err
	}
	resp := &response{header: http.Header{}, file: f, size: fi.Size()}
	hdrs, err := fsrv.headersFor(r, name)
	if err != nil {
		resp.close()
		return nil, err
	}
	if !hdrs.has("Content-Type") {
		resp.header.Set("Content-Type", contentType(rel))
	}
	for _, h := range hdrs {
		resp.header.Add(h.name, h.value)
	}
	if err := fsrv.pipeline(r, rel, resp); err != nil {
		resp.close()
		return nil, err
	}
	return resp, nil
}

// wrapped builds the page w generates for rel; fs.ErrNotExist means there
// is no .js source for it.
func (fsrv *fileServer) wrapped(r *http.Request, rel string, w wrapper) (*response, error) {
	source := fsrv.osPath(strings.TrimSuffix(rel, w.suffix) + w.source)
	src, err := readRegular(source, maxBuffered)
	if errors.Is(err, errNotRegular) {
		return nil, notRegular(strings.TrimSuffix(r.URL.Path, w.suffix) + w.source)
	}
	if err != nil {
		return nil, err
	}
	meta := readScriptMeta(src)
	if !w.exposed(meta) {
		return nil, notFound("%s: this test cannot be loaded in %s mode", r.URL.Path, w.global)
	}
	resource := strings.TrimSuffix(r.URL.EscapedPath(), w.suffix) + w.resource
	query := ""
	if r.URL.RawQuery != "" {
		query = "?" + r.URL.RawQuery
	}
	hdrs, err := fsrv.headersFor(r, source)
	if err != nil {
		return nil, err
	}
	resp := &response{header: http.Header{}, body: []byte(w.render(meta, resource, query))}
	resp.header.Set("Content-Type", w.contentType)
	for _, h := range hdrs {
		resp.header.Set(h.name, h.value) // wrappers replace, as wptserve's do
	}
	return resp, fsrv.pipeline(r, resource, resp)
}

// pipeline applies the sub pipe for .sub. names, then any pipe= query.
func (fsrv *fileServer) pipeline(r *http.Request, name string, resp *response) error {
	var calls []pipeCall
	if strings.Contains(name, ".sub.") {
		escape := "none"
		if markupExts[path.Ext(name)] {
			escape = "html"
		}
		calls = append(calls, pipeCall{name: "sub", args: []string{escape}})
	}
	if pipes := parseQuery(r.URL.RawQuery, false)["pipe"]; len(pipes) > 0 {
		more, err := parsePipes(pipes[len(pipes)-1])
		if err != nil {
			return err
		}
		calls = append(calls, more...)
	}
	return applyPipes(calls, resp, fsrv.site, r)
}

type headerLine struct{ name, value string }

type headerLines []headerLine

func (hs headerLines) has(name string) bool {
	for _, h := range hs {
		if strings.EqualFold(h.name, name) {
			return true
		}
	}
	return false
}

// headersFor returns the headers files' lines for the file name: the
// sibling __dir__ file's first, then the file's own. Only the file's own
// directory is consulted, as in wptserve.
func (fsrv *fileServer) headersFor(r *http.Request, name string) (headerLines, error) {
	dir, err := fsrv.headersFile(r, filepath.Join(filepath.Dir(name), "__dir__"))
	if err != nil {
		return nil, err
	}
	own, err := fsrv.headersFile(r, name)
	return append(dir, own...), err
}

// headersFile reads base.sub.headers (substituted) or else base.headers.
func (fsrv *fileServer) headersFile(r *http.Request, base string) (headerLines, error) {
	data, err := readRegular(base+".sub.headers", maxHeadersFile)
	if err == nil {
		if data, err = fsrv.site.expand(r, data, false); err != nil {
			return nil, fmt.Errorf("%s.sub.headers: %w", filepath.Base(base), err)
		}
	} else if errors.Is(err, fs.ErrNotExist) {
		data, err = readRegular(base+".headers", maxHeadersFile)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
	}
	if errors.Is(err, errNotRegular) {
		return nil, notRegular(r.URL.Path + " headers")
	}
	if err != nil {
		return nil, err
	}
	var out headerLines
	for _, line := range strings.FieldsFunc(string(data), func(c rune) bool { return c == '\n' || c == '\r' }) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("%s headers: line %q has no colon", filepath.Base(base), line)
		}
		out = append(out, headerLine{strings.TrimSpace(name), strings.TrimSpace(value)})
	}
	return out, nil
}

// write sends resp, and closes its file. Plain 200 responses go through
// http.ServeContent for Range, HEAD and If-* support: a file body is read
// only for the bytes sent. No Last-Modified is sent, so browsers do not
// cache test files between runs.
func (resp *response) write(w http.ResponseWriter, r *http.Request) {
	defer resp.close()
	for k, vs := range resp.header {
		w.Header()[k] = vs
	}
	var content io.ReadSeeker = bytes.NewReader(resp.body)
	size := int64(len(resp.body))
	if resp.file != nil {
		content, size = resp.file, resp.size
	}
	if resp.status == 0 || resp.status == http.StatusOK {
		http.ServeContent(w, r, "", time.Time{}, content)
		return
	}
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(resp.status)
	if r.Method != http.MethodHead {
		_, _ = io.CopyN(w, content, size)
	}
}
