package wpt

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// loopbackClient is an HTTP client that trusts only s's CA and, like a
// browser told by --host-resolver-rules, sends every host name to 127.0.0.1.
func loopbackClient(s *Server) *http.Client {
	roots := x509.NewCertPool()
	if ca := s.CA(); ca != nil {
		roots.AddCert(ca)
	}
	dialer := &net.Dialer{}
	return &http.Client{
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots},
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				_, port, err := net.SplitHostPort(addr)
				if err != nil {
					return nil, err
				}
				return dialer.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func get(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(url)
	assert.NilError(t, err, url)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	return resp, string(b)
}

// TLS on two ports per host, with a certificate for every WPT host name and
// loopback that chains to the server's CA, and the https ports in
// substitutions.
func TestTLS(t *testing.T) {
	s := startServer(t, map[string]string{
		"a.sub.txt": "{{location[scheme]}} {{location[host]}} {{ports[https][0]}} {{ports[https][1]}} {{ports[wss][1]}} {{ports[http][0]}}",
	}, Options{WPTHosts: true, SecondPort: true, HTTPS: true})
	c := loopbackClient(s)

	origins := []string{s.Origin(), s.Origin2(), s.AltOrigin(), s.AltOrigin2(), s.HTTPSOrigin(), s.HTTPSOrigin2(), s.AltHTTPSOrigin()}
	ports := map[string]bool{}
	for _, o := range origins {
		u, err := url.Parse(o)
		assert.NilError(t, err, o)
		ports[u.Port()] = true
	}
	assert.Check(t, is.Len(ports, len(origins)), "distinct ports: %q", origins)
	assert.Check(t, strings.HasPrefix(s.HTTPSOrigin(), "https://web-platform.test:"), s.HTTPSOrigin())
	assert.Check(t, strings.HasPrefix(s.AltHTTPSOrigin(), "https://not-web-platform.test:"), s.AltHTTPSOrigin())

	port := func(o string) string { u, _ := url.Parse(o); return u.Port() }
	want := port(s.HTTPSOrigin()) + " " + port(s.HTTPSOrigin2()) + " " + port(s.HTTPSOrigin2()) + " " + port(s.Origin())
	for _, host := range []string{"web-platform.test", "www1.web-platform.test", "xn--lve-6lad.web-platform.test",
		"xn--n8j6ds53lwwkrqhv28a.not-web-platform.test", "localhost", "127.0.0.1"} {
		for _, p := range []string{port(s.HTTPSOrigin()), port(s.HTTPSOrigin2()), port(s.AltHTTPSOrigin())} {
			hp := net.JoinHostPort(host, p)
			resp, body := get(t, c, "https://"+hp+"/a.sub.txt")
			assert.Check(t, is.Equal(resp.StatusCode, 200), hp)
			assert.Check(t, is.Equal(body, "https "+hp+" "+want), hp)
			assert.Check(t, is.Equal(resp.TLS.NegotiatedProtocol, ""), "HTTP/1.1, as wptserve's https ports")
		}
	}
	_, body := get(t, c, s.Origin()+"/a.sub.txt")
	assert.Check(t, strings.HasPrefix(body, "http web-platform.test:"), body)

	// The SPKI hash is the leaf's, which is what the server presents.
	resp, _ := get(t, c, s.HTTPSOrigin()+"/a.sub.txt")
	leaf := resp.TLS.PeerCertificates[0]
	sum := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	assert.Check(t, is.Equal(s.SPKIHash(), base64.StdEncoding.EncodeToString(sum[:])))
	assert.Check(t, is.Equal(leaf.Subject.CommonName, "web-platform.test"))
	assert.Check(t, is.Len(leaf.DNSNames, 1+2*(1+len(wptSubdomains))), "every WPT name once, and localhost: %q", leaf.DNSNames)
	assert.Check(t, is.Equal(leaf.DNSNames[0], "web-platform.test"))
	assert.Check(t, !is.Contains(leaf.DNSNames, "nonexistent.web-platform.test")().Success(), "nonexistent hosts are not in the certificate")
	assert.Check(t, is.Len(leaf.IPAddresses, 2))
	assert.Check(t, s.CA().IsCA)

	// A client that does not trust the CA is refused.
	untrusting := loopbackClient(s)
	untrusting.Transport.(*http.Transport).TLSClientConfig.RootCAs = x509.NewCertPool()
	_, err := untrusting.Get(s.HTTPSOrigin())
	assert.Check(t, is.ErrorContains(err, "certificate signed by unknown authority"))
}

func TestTLSLoopback(t *testing.T) {
	s := startServer(t, map[string]string{"a.sub.txt": "{{host}} {{ports[https][0]}}"}, Options{MainHost: "localhost", HTTPS: true})
	assert.Check(t, strings.HasPrefix(s.HTTPSOrigin(), "https://localhost:"), s.HTTPSOrigin())
	assert.Check(t, is.Equal(s.HTTPSOrigin2(), ""), "no second port unless asked for")
	c := loopbackClient(s)
	_, body := get(t, c, s.HTTPSOrigin()+"/a.sub.txt")
	u, _ := url.Parse(s.HTTPSOrigin())
	assert.Check(t, is.Equal(body, "localhost "+u.Port()))
	resp, _ := get(t, c, s.AltHTTPSOrigin()+"/a.sub.txt")
	assert.Check(t, is.Equal(resp.StatusCode, 200))

	// Without HTTPS there is no certificate, and https ports are the HTTP ones.
	plain := startServer(t, map[string]string{"a.sub.txt": "{{ports[https][0]}}"}, Options{})
	assert.Check(t, plain.CA() == nil)
	assert.Check(t, is.Equal(plain.SPKIHash(), ""))
	assert.Check(t, is.Equal(plain.HTTPSOrigin(), ""))
	u, _ = url.Parse(plain.Origin())
	assert.Check(t, is.Equal(httpGet(t, plain.URL("/a.sub.txt")), u.Port()))
}

func TestWPTHostsOptions(t *testing.T) {
	root := writeTree(t, map[string]string{"a.txt": "a"})
	_, err := NewServer(root, Options{WPTHosts: true, MainHost: "localhost"})
	assert.ErrorContains(t, err, "WPTHosts")

	s, err := NewServer(root, Options{WPTHosts: true})
	assert.NilError(t, err)
	for target, code := range map[string]int{
		"http://web-platform.test/a.txt":                             200,
		"http://www2.web-platform.test:1/a.txt":                      200,
		"http://xn--n8j6ds53lwwkrqhv28a.not-web-platform.test/a.txt": 200,
		"http://not-web-platform.test./a.txt":                        200,
		"http://localhost/a.txt":                                     200,
		"http://127.0.0.1/a.txt":                                     200,
		"http://web-platform.test.example.com/a.txt":                 403,
		"http://other.test/a.txt":                                    403,
	} {
		assert.Check(t, is.Equal(serve(s, "GET", target).Code, code), target)
	}
	loop := newTestServer(t, map[string]string{"a.txt": "a"})
	assert.Check(t, is.Equal(serve(loop, "GET", "http://web-platform.test/a.txt").Code, 403), "WPT names only in the WPT mode")
}

// URL loads tests as wptrunner does: .https. and service worker tests over
// TLS, .www. tests on the www subdomain.
func TestURL(t *testing.T) {
	s := startServer(t, map[string]string{}, Options{WPTHosts: true, HTTPS: true})
	http0, https0 := s.Origin(), s.HTTPSOrigin()
	www := strings.Replace(http0, "://", "://www.", 1)
	for path, want := range map[string]string{
		"/a/b.html":                          http0 + "/a/b.html",
		"/a/b.https.html":                    https0 + "/a/b.https.html",
		"/a/b.https.any.html?x=1":            https0 + "/a/b.https.any.html?x=1",
		"/a/b.any.serviceworker.html":        https0 + "/a/b.any.serviceworker.html",
		"/a/b.any.serviceworker-module.html": https0 + "/a/b.any.serviceworker-module.html",
		"/a/b.www.html":                      www + "/a/b.www.html",
		"/a/b.https.www.html":                strings.Replace(https0, "://", "://www.", 1) + "/a/b.https.www.html",
		"/a.https/b.html":                    http0 + "/a.https/b.html",
		"/a/https.html":                      http0 + "/a/https.html",
		"/a/b.html?wpt_flags=https":          http0 + "/a/b.html?wpt_flags=https",
	} {
		assert.Check(t, is.Equal(s.URL(path), want), path)
	}
	plain := startServer(t, map[string]string{}, Options{})
	assert.Check(t, strings.HasPrefix(plain.URL("/a.https.html"), "http://127.0.0.1:"), "no TLS: plain HTTP, a secure context on loopback")
}

func TestRedirectPy(t *testing.T) {
	s := newTestServer(t, map[string]string{"common/redirect.py": "def main(request, response): pass"})
	w := serve(s, "GET", mainURL+"/common/redirect.py?location=https://not-web-platform.test:8443/x.js%3Fa%3D1")
	assert.Check(t, is.Equal(w.Code, 302))
	assert.Check(t, is.Equal(w.Header().Get("Location"), "https://not-web-platform.test:8443/x.js?a=1"))
	assert.Check(t, is.Equal(w.Header().Get("Access-Control-Allow-Origin"), ""))
	assert.Check(t, is.Equal(w.Body.String(), ""), "never the Python source")

	for query, code := range map[string]int{
		"status=301&location=/a": 301, "status=307&location=/a": 307, "status=308&location=/a": 308,
		"status=abc&location=/a": 302, "status=&location=/a": 302, "location=/a&status=303&status=301": 303,
		"status=0&location=/a": 400, "status=1000&location=/a": 400, "status=302": 400,
	} {
		assert.Check(t, is.Equal(serve(s, "GET", mainURL+"/common/redirect.py?"+query).Code, code), query)
	}
	assert.Check(t, is.Contains(serve(s, "GET", mainURL+"/common/redirect.py").Body.String(), "no location"))

	// CORS only when asked for and when there is an Origin.
	w = serve(s, "POST", mainURL+"/common/redirect.py?location=/a&enable-cors", "Origin: https://www1.web-platform.test:8443")
	assert.Check(t, is.Equal(w.Code, 302), "any method")
	assert.Check(t, is.Equal(w.Header().Get("Access-Control-Allow-Origin"), "https://www1.web-platform.test:8443"))
	assert.Check(t, is.Equal(w.Header().Get("Access-Control-Allow-Credentials"), "true"))
	assert.Check(t, is.Equal(w.Header().Get("Content-Type"), "text/plain"))
	w = serve(s, "GET", mainURL+"/common/redirect.py?location=/a&enable-cors=")
	assert.Check(t, is.Equal(w.Header().Get("Access-Control-Allow-Origin"), ""))

	// measure-memory's copy, served even where the tree lacks it.
	w = serve(s, "GET", mainURL+"/measure-memory/resources/redirect.py?location=/b", "Origin: http://x")
	assert.Check(t, is.Equal(w.Code, 302))
	assert.Check(t, is.Equal(w.Header().Get("Cross-Origin-Embedder-Policy"), "require-corp"))
	assert.Check(t, is.Equal(w.Header().Get("Cross-Origin-Resource-Policy"), "cross-origin"))
	assert.Check(t, is.Equal(w.Header().Get("Access-Control-Allow-Origin"), ""))

	// Query pipes apply to handlers' responses, as in wptserve.
	w = serve(s, "GET", mainURL+"/common/redirect.py?location=/a&pipe=header(X-P,p)")
	assert.Check(t, is.Equal(w.Header().Get("X-P"), "p"))
	assert.Check(t, is.Equal(serve(s, "HEAD", mainURL+"/common/redirect.py?location=/a").Code, 302))
}

func TestUnsupportedPython(t *testing.T) {
	s := newTestServer(t, map[string]string{
		"d/handler.py":     "def main(request, response):\n    return 'secret source'\n",
		"d/dir.py/x.txt":   "x",
		"d/handler.py.txt": "not python",
	})
	w := serve(s, "POST", mainURL+"/d/handler.py?x=1")
	assert.Check(t, is.Equal(w.Code, 501))
	assert.Check(t, is.Contains(w.Body.String(), "/d/handler.py is a wptserve Python handler"))
	assert.Check(t, is.Contains(w.Body.String(), "/common/redirect.py"), "the body says what is implemented")
	assert.Check(t, !strings.Contains(w.Body.String(), "secret source"))
	assert.Check(t, is.Equal(serve(s, "GET", mainURL+"/d/missing.py").Code, 404))
	assert.Check(t, is.Equal(serve(s, "GET", mainURL+"/d/dir.py").Code, 404))
	assert.Check(t, is.Equal(serve(s, "GET", mainURL+"/d/../d/handler.py").Code, 404))
	assert.Check(t, is.Equal(serve(s, "GET", mainURL+"/d/handler.py.txt").Code, 200))
	serve(s, "GET", mainURL+"/d/handler.py")

	assert.Check(t, is.DeepEqual(s.TakeUnsupported(), []string{"/d/handler.py", "/d/handler.py"}))
	assert.Check(t, is.Len(s.TakeUnsupported(), 0), "taking clears the list")
	for range maxUnsupported + 5 {
		serve(s, "GET", mainURL+"/d/handler.py")
	}
	assert.Check(t, is.Len(s.TakeUnsupported(), maxUnsupported), "bounded when no one takes it")
}

// wptserve's headers lookup: the file's own directory's __dir__ file first
// (.sub.headers substituted, instead of .headers), then the file's; the
// wrappers take the .js file's; Python handlers none.
func TestHeadersLookup(t *testing.T) {
	s := newTestServer(t, map[string]string{
		"a/__dir__.sub.headers":      "X-Dir: {{host}}\n",
		"a/__dir__.headers":          "X-Ignored: because the .sub.headers exists\n",
		"a/b/__dir__.headers":        "X-Inner: inner\n",
		"a/b/c.html":                 "c",
		"a/b/c.html.sub.headers":     "X-Own: {{GET[v]}}\n",
		"a/d.html":                   "d",
		"a/t.window.js":              "test(() => {});\n",
		"a/t.window.js.headers":      "X-Js: js\n",
		"common/__dir__.headers":     "X-Common: c\n",
		"common/redirect.py":         "",
		"common/redirect.py.headers": "X-Py: py\n",
	})
	h := serve(s, "GET", mainURL+"/a/d.html").Header()
	assert.Check(t, is.Equal(h.Get("X-Dir"), "127.0.0.1"))
	assert.Check(t, is.Equal(h.Get("X-Ignored"), ""))
	h = serve(s, "GET", mainURL+"/a/b/c.html?v=1").Header()
	assert.Check(t, is.Equal(h.Get("X-Dir"), ""), "a parent's __dir__ does not apply")
	assert.Check(t, is.Equal(h.Get("X-Inner"), "inner"))
	assert.Check(t, is.Equal(h.Get("X-Own"), "1"))
	h = serve(s, "GET", mainURL+"/a/t.window.html").Header()
	assert.Check(t, is.Equal(h.Get("X-Dir"), "127.0.0.1"))
	assert.Check(t, is.Equal(h.Get("X-Js"), "js"))
	h = serve(s, "GET", mainURL+"/common/redirect.py?location=/").Header()
	assert.Check(t, is.Equal(h.Get("X-Py")+h.Get("X-Common"), ""), "handlers get no headers files")
}

// Options.Document rewrites the HTML documents of the tree (files and
// generated wrappers), seeing their headers, and nothing else.
func TestDocumentHook(t *testing.T) {
	files := map[string]string{
		"p.html":         "<!doctype html><p>page",
		"p.html.headers": "Document-Policy: js-profiling\n",
		"s.js":           "x = 1",
		"t.any.js":       "test(() => {});",
	}
	s, err := NewServer(writeTree(t, files), Options{Document: func(body []byte, h http.Header) []byte {
		return append([]byte("<!-- policy: "+h.Get("Document-Policy")+" -->"), body...)
	}})
	assert.NilError(t, err)
	w := serve(s, "GET", mainURL+"/p.html")
	assert.Check(t, is.Equal(w.Body.String(), "<!-- policy: js-profiling --><!doctype html><p>page"))
	assert.Check(t, is.Equal(w.Header().Get("Content-Length"), strconv.Itoa(w.Body.Len())))
	assert.Check(t, is.Equal(serve(s, "GET", mainURL+"/s.js").Body.String(), "x = 1"))
	assert.Check(t, strings.HasPrefix(serve(s, "GET", mainURL+"/t.any.html").Body.String(), "<!-- policy:  -->"))
}

// wptserve's rewrite: /resources/WebIDLParser.js is webidl2's file, in
// today's layout or the older one.
func TestRewrites(t *testing.T) {
	for _, file := range []string{"resources/webidl2/lib/webidl2.js", "resources/webidl2/webidl2.js"} {
		s := newTestServer(t, map[string]string{file: "webidl2 " + file})
		w := serve(s, "GET", mainURL+"/resources/WebIDLParser.js")
		assert.Check(t, is.Equal(w.Code, 200))
		assert.Check(t, is.Equal(w.Body.String(), "webidl2 "+file))
		assert.Check(t, is.Contains(w.Header().Get("Content-Type"), "javascript"))
	}
	s := newTestServer(t, map[string]string{"resources/WebIDLParser.js": "the placeholder"})
	assert.Check(t, is.Equal(serve(s, "GET", mainURL+"/resources/WebIDLParser.js").Body.String(), "the placeholder"), "no webidl2: the file itself")
}
