package wpt

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"
)

// mainURL is the origin of requests sent straight to ServeHTTP.
const mainURL = "http://127.0.0.1:8000"

func TestContentTypes(t *testing.T) {
	files := map[string]string{}
	want := map[string]string{
		"a.html": "text/html", "a.htm": "text/html", "a.js": "text/javascript",
		"a.mjs": "text/javascript", "a.css": "text/css", "a.json": "application/json",
		"a.svg": "image/svg+xml", "a.txt": "text/plain", "a.xhtml": "application/xhtml+xml",
		"a.xml": "application/xml", "a.png": "image/png", "a.wasm": "application/wasm",
		"a.bin": "application/octet-stream", "noext": "application/octet-stream",
	}
	for name := range want {
		files["dir/"+name] = "x"
	}
	s := newTestServer(t, files)
	for name, ct := range want {
		w := serve(s, "GET", mainURL+"/dir/"+name)
		assert.Check(t, is.Equal(w.Code, 200), name)
		assert.Check(t, is.Equal(w.Header().Get("Content-Type"), ct), name)
	}
}

func TestHeadersFiles(t *testing.T) {
	s := newTestServer(t, map[string]string{
		"d/__dir__.headers":         "X-Dir: dir\nX-Both: from-dir\n",
		"d/a.html":                  "a",
		"d/a.html.headers":          "X-Both: from-file\r\nDocument-Policy: js-profiling\n\n",
		"d/b.txt":                   "b",
		"d/b.txt.headers":           "Content-Type: text/html; charset=utf-8\n",
		"d/c.html":                  "c",
		"d/c.html.headers":          "X-Plain: ignored because .sub.headers wins\n",
		"d/c.html.sub.headers":      "X-Host: {{host}}\nX-Query: {{GET[q]}}\n",
		"d/sub/e.html":              "e",
		"d/bad.html":                "bad",
		"d/bad.html.headers":        "no colon here\n",
		"d/badsub.html":             "badsub",
		"d/badsub.html.sub.headers": "X-Nope: {{nope}}\n",
		"d/wrap.any.js":             "test(() => {});\n",
		"d/wrap.any.js.headers":     "Cross-Origin-Embedder-Policy: require-corp\n",
		"top.html":                  "top",
		"__dir__.headers":           "X-Root: root\n",
	})

	h := serve(s, "GET", mainURL+"/d/a.html").Header()
	assert.Check(t, is.DeepEqual(h.Values("X-Both"), []string{"from-dir", "from-file"}), "__dir__ then file headers are both sent")
	assert.Check(t, is.Equal(h.Get("X-Dir"), "dir"))
	assert.Check(t, is.Equal(h.Get("Document-Policy"), "js-profiling"))
	assert.Check(t, is.Equal(h.Get("X-Root"), ""), "the root's __dir__.headers does not apply to subdirectories")
	assert.Check(t, is.Equal(h.Get("Content-Type"), "text/html"))

	h = serve(s, "GET", mainURL+"/d/b.txt").Header()
	assert.Check(t, is.DeepEqual(h.Values("Content-Type"), []string{"text/html; charset=utf-8"}), "a Content-Type line replaces the guess")

	h = serve(s, "GET", "http://localhost:8001/d/c.html?q=v%20w").Header()
	assert.Check(t, is.Equal(h.Get("X-Host"), "127.0.0.1"))
	assert.Check(t, is.Equal(h.Get("X-Query"), "v w"))
	assert.Check(t, is.Equal(h.Get("X-Plain"), ""), ".sub.headers is read instead of .headers")

	assert.Check(t, is.Equal(serve(s, "GET", mainURL+"/d/sub/e.html").Header().Get("X-Dir"), ""),
		"__dir__.headers does not apply to subdirectories")
	assert.Check(t, is.Equal(serve(s, "GET", mainURL+"/top.html").Header().Get("X-Root"), "root"))

	assert.Check(t, is.Equal(serve(s, "GET", mainURL+"/d/bad.html").Code, 500))
	w := serve(s, "GET", mainURL+"/d/badsub.html")
	assert.Check(t, is.Equal(w.Code, 500))
	assert.Check(t, is.Contains(w.Body.String(), "{{nope}}"), "the error names the substitution")

	h = serve(s, "GET", mainURL+"/d/wrap.any.html").Header()
	assert.Check(t, is.Equal(h.Get("Cross-Origin-Embedder-Policy"), "require-corp"), "wrappers carry the .js file's headers")
	assert.Check(t, is.Equal(h.Get("X-Dir"), "dir"))
}

func TestSubFilesAndEscaping(t *testing.T) {
	s := startServer(t, map[string]string{
		"a/page.sub.html":   `<a title="{{GET[x]}}">{{host}}:{{ports[http][0]}}</a>`,
		"a/script.sub.js":   `var x = "{{GET[x]}}"; var h = "{{hosts[alt][]}}";`,
		"a/plain.html":      `{{host}}`,
		"a/broken.sub.html": `ok {{host}} then {{unknown_thing}}`,
	}, Options{})
	port := strings.TrimPrefix(s.Origin(), "http://127.0.0.1:")

	body := serve(s, "GET", s.Origin()+"/a/page.sub.html?x=%3Cb%3E%22").Body.String()
	assert.Equal(t, body, `<a title="&lt;b&gt;&#34;">127.0.0.1:`+port+`</a>`, "markup files are HTML-escaped")
	body = serve(s, "GET", s.Origin()+"/a/script.sub.js?x=%3Cb%3E").Body.String()
	assert.Equal(t, body, `var x = "<b>"; var h = "localhost";`, "other files are not")
	assert.Equal(t, serve(s, "GET", s.Origin()+"/a/plain.html").Body.String(), "{{host}}")

	w := serve(s, "GET", s.Origin()+"/a/broken.sub.html")
	assert.Equal(t, w.Code, 500)
	assert.Check(t, is.Contains(w.Body.String(), "{{unknown_thing}}"))
}

func TestPipes(t *testing.T) {
	s := startServer(t, map[string]string{
		"p/iframe.html":  "<p>{{host}}</p>",
		"p/worker.js":    "postMessage(1)",
		"p/tmpl.sub.txt": "{{GET[a]}}",
	}, Options{})
	o := s.Origin()

	w := serve(s, "GET", o+"/p/iframe.html?pipe=header(Cross-Origin-Opener-Policy,same-origin)|header(Cross-Origin-Embedder-Policy,require-corp)")
	assert.Check(t, is.Equal(w.Header().Get("Cross-Origin-Opener-Policy"), "same-origin"))
	assert.Check(t, is.Equal(w.Header().Get("Cross-Origin-Embedder-Policy"), "require-corp"))
	assert.Check(t, is.Equal(w.Body.String(), "<p>{{host}}</p>"), "header does not substitute")

	// ";" survives query parsing, and a replaced header loses its old value.
	w = serve(s, "GET", o+"/p/worker.js?pipe=header(Content-Type,text/plain;charset=utf-8)")
	assert.Check(t, is.DeepEqual(w.Header().Values("Content-Type"), []string{"text/plain;charset=utf-8"}))
	w = serve(s, "GET", o+"/p/worker.js?pipe=header(X-A,1)|header(X-A,2,True)")
	assert.Check(t, is.DeepEqual(w.Header().Values("X-A"), []string{"1", "2"}))

	assert.Check(t, is.Equal(serve(s, "GET", o+"/p/iframe.html?pipe=sub").Body.String(), "<p>127.0.0.1</p>"))

	w = serve(s, "GET", o+"/p/iframe.html?pipe=status(404)|header(X-B,b)")
	assert.Check(t, is.Equal(w.Code, 404))
	assert.Check(t, is.Equal(w.Header().Get("X-B"), "b"))
	assert.Check(t, is.Equal(w.Body.String(), "<p>{{host}}</p>"))

	// .sub. files are substituted first, then the query pipes run.
	w = serve(s, "GET", o+"/p/tmpl.sub.txt?a=x&pipe=header(X-C,c)")
	assert.Check(t, is.Equal(w.Body.String(), "x"))
	assert.Check(t, is.Equal(w.Header().Get("X-C"), "c"))

	w = serve(s, "GET", o+"/p/iframe.html?pipe=gzip")
	assert.Check(t, is.Equal(w.Code, 500))
	assert.Check(t, is.Contains(w.Body.String(), "gzip"))
}

func TestWrappers(t *testing.T) {
	s := newTestServer(t, map[string]string{
		"w/t.any.js":         "// META: title=T & <t>\n// META: script=/common/a.js\n// META: timeout=long\ntest(() => {});\n",
		"w/win.any.js":       "// META: global=window\ntest(() => {});\n",
		"w/all.any.js":       "// META: global=window,worker\n",
		"w/x.window.js":      "// META: script=resources/helper.js\n// META: title=X\ntest(() => {});\n",
		"w/y.worker.js":      "importScripts('/resources/testharness.js'); done();\n",
		"w/real.worker.html": "a real page with no .worker.js next to it",
	})
	body := func(p string) string {
		t.Helper()
		w := serve(s, "GET", mainURL+p)
		assert.Equal(t, w.Code, 200, "%s: %s", p, w.Body)
		return w.Body.String()
	}

	golden.Assert(t, body("/w/t.any.html"), "wrapper.any.html.golden")
	golden.Assert(t, body("/w/t.any.worker.html?q=1"), "wrapper.any.worker.html.golden")
	golden.Assert(t, body("/w/t.any.worker.js"), "wrapper.any.worker.js.golden")
	golden.Assert(t, body("/w/x.window.html"), "wrapper.window.html.golden")

	assert.Check(t, is.Contains(body("/w/y.worker.html"), `new Worker("/w/y.worker.js")`))
	assert.Check(t, is.Contains(body("/w/all.any.sharedworker.html"), `new SharedWorker("/w/all.any.worker.js")`))
	assert.Check(t, is.Contains(body("/w/all.any.serviceworker.html"), `register("/w/all.any.worker.js", {scope})`))
	assert.Check(t, strings.HasPrefix(body("/w/real.worker.html"), "a real page"), "a real file is served when there is no source")
	assert.Check(t, is.Equal(serve(s, "GET", mainURL+"/w/t.any.worker.js").Header().Get("Content-Type"), "text/javascript"))

	assert.Check(t, is.Equal(serve(s, "GET", mainURL+"/w/win.any.worker.html").Code, 404), "global=window hides the worker variant")
	assert.Check(t, is.Equal(serve(s, "GET", mainURL+"/w/t.any.sharedworker.html").Code, 404), "default globals exclude sharedworker")
	assert.Check(t, is.Equal(serve(s, "GET", mainURL+"/w/missing.any.html").Code, 404))
}

func TestRequestSafety(t *testing.T) {
	s := newTestServer(t, map[string]string{"d/a.txt": "abcdef"})
	for _, tc := range []struct {
		method, target string
		code           int
	}{
		{"GET", mainURL + "/d/a.txt", 200},
		{"HEAD", mainURL + "/d/a.txt", 200},
		{"POST", mainURL + "/d/a.txt", 405},
		{"GET", mainURL + "/d/../d/a.txt", 404},
		{"GET", mainURL + "/d/", 404},
		{"GET", mainURL + "/", 404},
		{"GET", mainURL + "/nope", 404},
		{"GET", "http://example.com/d/a.txt", 403},
		{"GET", "http://www.localhost:9/d/a.txt", 200},
		{"GET", "http://[::1]:9/d/a.txt", 200},
	} {
		assert.Check(t, is.Equal(serve(s, tc.method, tc.target).Code, tc.code), "%s %s", tc.method, tc.target)
	}
	w := serve(s, "GET", mainURL+"/d/a.txt", "Range: bytes=1-2")
	assert.Check(t, is.Equal(w.Code, 206))
	assert.Check(t, is.Equal(w.Body.String(), "bc"))
	assert.Check(t, is.Equal(w.Header().Get("Last-Modified"), ""), "no Last-Modified, so browsers do not cache test files")
}

// TestOriginsAndMounts talks to the real listeners of every origin.
func TestOriginsAndMounts(t *testing.T) {
	s := startServer(t, map[string]string{
		"d/a.sub.txt":              "{{location[host]}} {{ports[http][1]}}",
		"resources/testharness.js": "from disk",
	}, Options{SecondPort: true})
	s.Mount("/resources/testharnessreport.js", Static("text/javascript", []byte("report")))
	s.Mount("/.wdext/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", r.Method, r.URL.Path)
	}))
	s.Mount("/resources/testharness.js", Static("text/javascript", []byte("mounted")))

	origins := []string{s.Origin(), s.AltOrigin(), s.Origin2(), s.AltOrigin2()}
	assert.Assert(t, strings.HasPrefix(origins[0], "http://127.0.0.1:"), origins)
	assert.Assert(t, strings.HasPrefix(origins[1], "http://localhost:"), origins)
	ports := map[string]bool{}
	for _, o := range origins {
		ports[o[strings.LastIndexByte(o, ':'):]] = true
	}
	assert.Assert(t, is.Len(ports, 4), "want 4 distinct ports: %q", origins)

	port1 := strings.TrimPrefix(s.Origin2(), "http://127.0.0.1:")
	for _, o := range origins {
		for path, want := range map[string]string{
			"/resources/testharnessreport.js": "report",
			"/resources/testharness.js":       "mounted",
			"/.wdext/force_sample":            "GET /.wdext/force_sample",
			"/d/a.sub.txt":                    strings.TrimPrefix(o, "http://") + " " + port1,
		} {
			assert.Check(t, is.Equal(httpGet(t, o+path), want), o+path)
		}
	}
	resp, err := http.Post(s.AltOrigin()+"/.wdext/force_sample", "text/plain", nil)
	assert.NilError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Check(t, is.Equal(string(b), "POST /.wdext/force_sample"), "mounts take any method")
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	assert.NilError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	return string(b)
}

func TestLifecycle(t *testing.T) {
	root := writeTree(t, map[string]string{"a.txt": "a"})
	_, err := NewServer(root+"/a.txt", Options{})
	assert.ErrorContains(t, err, "not a directory")
	_, err = NewServer(root, Options{MainHost: "example.com"})
	assert.ErrorContains(t, err, "MainHost")

	s, err := NewServer(root, Options{MainHost: "localhost"})
	assert.NilError(t, err)
	assert.Equal(t, s.Origin(), "", "no origin before Start")
	ctx, cancel := context.WithCancel(context.Background())
	assert.NilError(t, s.Start(ctx))
	assert.Check(t, strings.HasPrefix(s.Origin(), "http://localhost:"), s.Origin())
	assert.Check(t, strings.HasPrefix(s.AltOrigin(), "http://127.0.0.1:"), s.AltOrigin())
	assert.Check(t, is.Equal(s.Origin2(), ""), "no second port unless asked for")
	assert.Check(t, s.Start(ctx) != nil, "a second Start fails")
	assert.Equal(t, httpGet(t, s.URL("/a.txt")), "a")

	cancel() // the context bounds the server's lifetime too
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(s.URL("/a.txt"))
		if err != nil {
			break
		}
		resp.Body.Close()
		assert.Assert(t, time.Now().Before(deadline), "still serving after its context was cancelled")
		time.Sleep(10 * time.Millisecond)
	}
	assert.NilError(t, s.Close())
	assert.NilError(t, s.Close(), "Close is idempotent")
	assert.Check(t, s.Start(context.Background()) != nil, "Start after Close fails")
}

// A browser of a WPT-hosts server must resolve WPT's names, the
// nonexistent ones excepted; a loopback server needs none.
func TestHostNames(t *testing.T) {
	s, err := NewServer(t.TempDir(), Options{WPTHosts: true})
	assert.NilError(t, err)
	names := s.HostNames()
	assert.Equal(t, len(names), 12, "%v", names)
	assert.Assert(t, slices.IsSorted(names), "%v", names)
	for _, want := range []string{"web-platform.test", "www1.web-platform.test", "xn--lve-6lad.web-platform.test", "not-web-platform.test", "www2.not-web-platform.test"} {
		assert.Assert(t, slices.Contains(names, want), "%s not in %v", want, names)
	}
	for _, n := range names {
		assert.Assert(t, !strings.Contains(n, "nonexistent"), "%v", names)
	}
	s, err = NewServer(t.TempDir(), Options{})
	assert.NilError(t, err)
	assert.Assert(t, s.HostNames() == nil)
}
