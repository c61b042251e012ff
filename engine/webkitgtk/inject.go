package webkitgtk

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wdext/wdext/polyfill"
)

// injector is an HTTP proxy that adds a script at the very start of every
// HTML document it carries for a navigation (after the doctype, so that no document falls
// into quirks mode): the browser runs it before any script of the page,
// in every frame loaded over http. CONNECT (https) is tunnelled untouched.
type injector struct {
	script []byte // the script's source
	ln     net.Listener
	srv    *http.Server
	tr     *http.Transport
	wg     sync.WaitGroup
}

func newInjector(script string) (*injector, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	in := &injector{
		script: []byte(script),
		ln:     ln,
		// Go's transport asks for gzip and decodes it, so bodies arrive
		// plain; no environment proxy.
		tr: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16, IdleConnTimeout: 30 * time.Second},
	}
	in.srv = &http.Server{Handler: in, ReadHeaderTimeout: 30 * time.Second}
	in.wg.Add(1)
	go func() { // owned by the injector: ends at close
		defer in.wg.Done()
		in.srv.Serve(ln)
	}()
	return in, nil
}

// addr is host:port for the proxy capability.
func (in *injector) addr() string { return in.ln.Addr().String() }

func (in *injector) close() {
	in.srv.Close()
	in.wg.Wait()
	in.tr.CloseIdleConnections()
}

var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func (in *injector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		in.tunnel(w, r)
		return
	}
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		http.Error(w, "wdext injector: not a proxy request", http.StatusBadRequest)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	out.Header.Del("Accept-Encoding") // let the transport ask for, and decode, gzip
	resp, err := in.tr.RoundTrip(out)
	if err != nil {
		http.Error(w, "wdext injector: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for _, h := range hopHeaders {
		resp.Header.Del(h)
	}
	html := isDocumentRequest(r) && isHTML(resp.Header.Get("Content-Type")) && r.Method != http.MethodHead &&
		resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotModified
	if !html {
		copyHeader(w.Header(), resp.Header)
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
		return
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, "wdext injector: "+err.Error(), http.StatusBadGateway)
		return
	}
	body = polyfill.InjectScript(body, documentScript(in.script, resp.Header))
	copyHeader(w.Header(), resp.Header)
	w.Header().Del("Content-Encoding")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(resp.StatusCode)
	w.Write(body)
}

func (in *injector) tunnel(w http.ResponseWriter, r *http.Request) {
	dst, err := net.DialTimeout("tcp", r.Host, 10*time.Second)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		dst.Close()
		http.Error(w, "no hijacking", http.StatusInternalServerError)
		return
	}
	src, buf, err := hj.Hijack()
	if err != nil {
		dst.Close()
		return
	}
	src.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	done := make(chan struct{})
	go func() { // owned by tunnel, which waits for it
		if buf.Reader.Buffered() > 0 {
			io.CopyN(dst, buf, int64(buf.Reader.Buffered()))
		}
		io.Copy(dst, src)
		dst.(*net.TCPConn).CloseWrite()
		close(done)
	}()
	io.Copy(src, dst)
	src.Close()
	<-done
	dst.Close()
}

func copyHeader(dst, src http.Header) {
	for k, v := range src {
		dst[k] = append([]string(nil), v...)
	}
}

// isDocumentRequest tells a navigation (a top-level document or a frame's)
// from a fetch or XHR of HTML, whose text must come back untouched: by
// Sec-Fetch-Dest when the browser sends it, else by an Accept that asks
// for HTML first, as navigations do.
func isDocumentRequest(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Dest") {
	case "document", "iframe", "frame":
		return true
	case "":
		return strings.HasPrefix(r.Header.Get("Accept"), "text/html")
	}
	return false
}

func isHTML(ct string) bool {
	ct = strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
	return ct == "text/html" || ct == "application/xhtml+xml"
}

// InjectProfiler is polyfill.InjectPolicy with the Profiler polyfill itself first
// (polyfill.Script("Profiler")): for a server that serves documents to a
// session and can put the polyfill in them, as wdext wpt does. Then every
// document has it, with its Document-Policy, before its own scripts,
// whatever the inspector reaches (a window wdext has not found yet, an
// https document, which the proxy does not see). The polyfill installs
// once per realm, so a document that the bootstrap script reaches as well
// is unchanged.
func InjectProfiler(body []byte, header http.Header) []byte {
	return polyfill.InjectScript(body, documentScript([]byte(polyfill.Script("Profiler")), header))
}

// documentScript is the script element a document of a response with
// header carries: the polyfill (source), the word that the page's agent
// delivers periodic samples, and the document's Document-Policy, which
// only the response tells (see polyfill.SetPolicyScript); the page's
// scripts run after it. The polyfill that installs first in a realm is
// the one that stays, and that may be this one, so it needs the other
// two (measured: without the first, a profiler there got no periodic
// sample).
func documentScript(source []byte, header http.Header) []byte {
	script := make([]byte, 0, len(source)+256)
	script = append(script, "<script>"...)
	script = append(script, source...)
	script = append(script, "\n"+polyfill.EnableSamplerScript+"\n"+polyfill.SetPolicyScript(polyfill.JSProfilingAllowed(header))+"</script>"...)
	return script
}
