package wpt

import (
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
)

// pyHandlers are the wptserve Python handlers wdext answers natively, by
// URL path: the ones the tests this project runs use. They answer whether
// or not the .py file is in the tree, so small trees can use them too.
var pyHandlers = map[string]func(r *http.Request) (*response, error){
	// /common/redirect.py, with its optional CORS.
	"/common/redirect.py": func(r *http.Request) (*response, error) {
		return redirectPy(r, true, nil)
	},
	// measure-memory's own copy: no CORS, but embeddable by the
	// cross-origin isolated pages that redirect through it.
	"/measure-memory/resources/redirect.py": func(r *http.Request) (*response, error) {
		return redirectPy(r, false, http.Header{
			"Cross-Origin-Embedder-Policy": {"require-corp"},
			"Cross-Origin-Resource-Policy": {"cross-origin"},
		})
	},
}

// NativePythonHandlers lists the Python handler paths wdext implements
// natively; any other *.py is answered 501.
func NativePythonHandlers() []string {
	var out []string
	for p := range pyHandlers {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

func isPython(urlPath string) bool { return strings.HasSuffix(urlPath, ".py") }

// python answers a request for a .py file: natively if wdext implements
// the handler, else 501 when the file exists (Python is never served as
// source, and never run) and 404 when it does not.
func (fsrv *fileServer) python(r *http.Request) (*response, error) {
	rel, ok := relPath(r.URL.Path)
	if !ok {
		return nil, notFound("%s: not found", r.URL.Path)
	}
	if h, ok := pyHandlers["/"+rel]; ok {
		resp, err := h(r)
		if err != nil {
			return nil, err
		}
		// wptserve runs a handler's response through the pipes too.
		return resp, fsrv.pipeline(r, rel, resp)
	}
	if fi, err := os.Stat(fsrv.osPath(rel)); err != nil || fi.IsDir() {
		return nil, notFound("%s: not found", r.URL.Path)
	}
	return nil, &httpError{code: http.StatusNotImplemented, msg: "wpt: /" + rel +
		" is a wptserve Python handler, which wdext does not run; natively implemented: " +
		strings.Join(NativePythonHandlers(), ", ")}
}

// redirectPy is WPT's redirect.py: a redirect (status, default 302, from
// the status parameter; one that is not a number is ignored) to the
// location parameter. With cors, an enable-cors parameter (any value)
// answers a request that has an Origin with credentialed CORS headers.
func redirectPy(r *http.Request, cors bool, extra http.Header) (*response, error) {
	q := parseQuery(r.URL.RawQuery, true)
	status := http.StatusFound
	if v, ok := q["status"]; ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v[0])); err == nil {
			status = n
		}
	}
	if status < 200 || status > 999 {
		// wptserve would send it; net/http cannot (a 1xx would be an
		// informational response followed by an implicit 200).
		return nil, &httpError{code: http.StatusBadRequest, msg: "redirect.py: status " + strconv.Itoa(status) + " is not an HTTP status"}
	}
	loc, ok := q["location"]
	if !ok {
		return nil, &httpError{code: http.StatusBadRequest, msg: "redirect.py: no location parameter"}
	}
	resp := &response{status: status, header: http.Header{}}
	resp.header.Set("Location", loc[0])
	for k, vs := range extra {
		resp.header[k] = slices.Clone(vs)
	}
	if _, ok := q["enable-cors"]; cors && ok {
		if origin := r.Header.Get("Origin"); origin != "" {
			resp.header.Set("Content-Type", "text/plain")
			resp.header.Set("Access-Control-Allow-Origin", origin)
			resp.header.Set("Access-Control-Allow-Credentials", "true")
		}
	}
	return resp, nil
}
