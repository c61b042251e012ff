package wpt

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log"
	"mime"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configure a Server.
type Options struct {
	// MainHost is {{host}} and the host of Origin in the loopback mode:
	// "127.0.0.1" (the default) or "localhost". The other one becomes the
	// alternate, cross-site host of AltOrigin and {{hosts[alt][]}}.
	// "localhost" is what /common/get-host-info.sub.js expects on loopback
	// (see the package documentation). It must be empty with WPTHosts.
	MainHost string
	// WPTHosts uses WPT's own host names, as wptserve does: {{host}} is
	// web-platform.test, {{domains[www1]}} www1.web-platform.test,
	// {{hosts[alt][]}} not-web-platform.test. The browser must resolve them
	// to 127.0.0.1 itself (a kind's WPT capabilities tell it to).
	WPTHosts bool
	// SecondPort also listens on a second port per host and scheme, WPT's
	// {{ports[http][1]}} and {{ports[https][1]}}, which get-host-info.sub.js
	// uses.
	SecondPort bool
	// HTTPS also serves every host over TLS on ports of its own
	// ({{ports[https][…]}}), with a certificate made for this server at
	// NewServer (see CA and SPKIHash).
	HTTPS bool
	// ErrorLog receives server errors and the reasons for 5xx responses;
	// nil means the log package's standard logger.
	ErrorLog *log.Logger
	// Document, if set, rewrites each HTML document the tree serves
	// (files and generated wrappers, not mounts) given its response
	// headers: a browser engine's hook, such as telling a polyfill the
	// document's Document-Policy before any of its scripts runs.
	Document func(body []byte, header http.Header) []byte
}

// Server serves a WPT-style tree on loopback under two cross-site hosts.
// Create it with NewServer, add virtual paths with Mount, then Start it.
type Server struct {
	root              string
	opts              Options
	mainHost, altHost string
	hosts             map[string]map[string]string // {{hosts[…][…]}}
	certs             *certs                       // nil without Options.HTTPS
	errorLog          *log.Logger
	mu                sync.RWMutex
	mounts            map[string]http.Handler
	site              *site // ports are known once started
	// Ports by host (main, alt) and scheme; TLS ones are empty without
	// Options.HTTPS.
	mainPorts, altPorts       []int
	mainTLSPorts, altTLSPorts []int
	unsupported               []string // .py paths answered 501, for TakeUnsupported
	srv                       *http.Server
	stopWatch                 func() bool // stops the context watcher
	started, closed           bool
	serving                   sync.WaitGroup // one Serve goroutine per listener
	closeOnce                 sync.Once
	closeErr                  error
}

// NewServer returns a server for the directory root.
func NewServer(root string, opts Options) (*Server, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("wpt: root: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("wpt: root %s is not a directory", root)
	}
	main, alt := "127.0.0.1", "localhost"
	switch {
	case opts.WPTHosts && opts.MainHost != "":
		return nil, fmt.Errorf("wpt: MainHost %q cannot be combined with WPTHosts (the main host is %s)", opts.MainHost, wptHost)
	case opts.WPTHosts:
		main, alt = wptHost, wptAltHost
	case opts.MainHost == "" || opts.MainHost == main:
	case opts.MainHost == alt:
		main, alt = alt, main
	default:
		return nil, fmt.Errorf("wpt: MainHost must be 127.0.0.1 or localhost, not %q", opts.MainHost)
	}
	hosts := loopbackHostTable(main, alt)
	if opts.WPTHosts {
		hosts = wptHostTable()
	}
	var c *certs
	if opts.HTTPS {
		// The certificate names every host a page can reach but the
		// nonexistent ones (wptserve's domains_set), and loopback.
		names := append(reachable(hosts), "localhost")
		slices.Sort(names)
		names = slices.Compact(names)
		if i := slices.Index(names, main); i > 0 { // first: it is the subject's name
			names = append([]string{main}, slices.Delete(names, i, i+1)...)
		}
		if c, err = newCerts(names); err != nil {
			return nil, err
		}
	}
	errorLog := opts.ErrorLog
	if errorLog == nil {
		errorLog = log.Default()
	}
	return &Server{
		root:     root,
		opts:     opts,
		mainHost: main,
		altHost:  alt,
		hosts:    hosts,
		certs:    c,
		errorLog: errorLog,
		mounts:   map[string]http.Handler{},
		site:     newSite(root, hosts, nil),
	}, nil
}

// CA is the certificate of the throw-away authority that signed the HTTPS
// ports' certificate, for clients that take a CA (e.g. a Go
// tls.Config.RootCAs); nil without Options.HTTPS.
func (s *Server) CA() *x509.Certificate {
	if s.certs == nil {
		return nil
	}
	return s.certs.ca
}

// SPKIHash is the base64 SHA-256 of the HTTPS certificate's
// SubjectPublicKeyInfo, the form a browser's SPKI allow list takes; "" without Options.HTTPS.
func (s *Server) SPKIHash() string {
	if s.certs == nil {
		return ""
	}
	return s.certs.spki
}

// WPTHosts reports whether the server uses WPT's host names, which the
// browser must be told to resolve (see Options.WPTHosts).
func (s *Server) WPTHosts() bool { return s.opts.WPTHosts }

// HostNames are the host names the browser must resolve to loopback,
// sorted: with WPTHosts, WPT's (web-platform.test, www1.…, the
// alternate's), but for the "nonexistent" ones; else none.
func (s *Server) HostNames() []string {
	if !s.opts.WPTHosts {
		return nil
	}
	return reachable(s.hosts)
}

// reachable are the names of a host table that a page can reach (all but
// the nonexistent ones, and no IP addresses), sorted, each once.
func reachable(hosts map[string]map[string]string) []string {
	var names []string
	for _, subs := range hosts {
		for sub, h := range subs {
			if sub != "nonexistent" && net.ParseIP(h) == nil {
				names = append(names, h)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Mount serves h at path on every origin, ahead of the file tree. A path
// ending in "/" mounts a subtree; otherwise the match is exact. The longest
// match wins, and mounting a path again replaces its handler. Mount may be
// called at any time.
func (s *Server) Mount(path string, h http.Handler) {
	if !strings.HasPrefix(path, "/") || h == nil {
		panic(fmt.Sprintf("wpt: Mount(%q): want an absolute path and a handler", path))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mounts[path] = h
}

// Static returns a handler that answers every request with body, for
// Mount-ing fixed files such as testharnessreport.js.
func Static(contentType string, body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
	})
}

// Start listens on loopback and serves until Close is called or ctx is
// done, whichever comes first.
func (s *Server) Start(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		return errors.New("wpt: server already started or closed")
	}
	perHost := 1
	if s.opts.SecondPort {
		perHost = 2
	}
	// Ports in this order: main HTTP, alt HTTP, main HTTPS, alt HTTPS.
	groups := 2
	if s.certs != nil {
		groups = 4
	}
	var lns []net.Listener
	for range groups * perHost {
		// Every host name resolves to 127.0.0.1, so every listener binds it.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return fmt.Errorf("wpt: listen: %w", err)
		}
		lns = append(lns, ln)
	}
	ports := make([][]int, groups)
	for i, ln := range lns {
		ports[i/perHost] = append(ports[i/perHost], ln.Addr().(*net.TCPAddr).Port)
	}
	s.mainPorts, s.altPorts = ports[0], ports[1]
	httpsPorts := s.mainPorts // without TLS, https URLs get the HTTP ports
	if s.certs != nil {
		s.mainTLSPorts, s.altTLSPorts = ports[2], ports[3]
		httpsPorts = s.mainTLSPorts
		tlsConf := s.certs.tlsConfig()
		for i := 2 * perHost; i < len(lns); i++ {
			lns[i] = tls.NewListener(lns[i], tlsConf)
		}
	}
	// As in wptserve, ports belong to schemes, not hosts: every host
	// answers on every port. ws and wss share the HTTP(S) ports (there is
	// no WebSocket server, but a mounted handler may upgrade).
	s.site = newSite(s.root, s.hosts, map[string][]int{
		"http": s.mainPorts, "ws": s.mainPorts, "https": httpsPorts, "wss": httpsPorts,
	})
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: time.Minute, ErrorLog: s.errorLog}
	for _, ln := range lns {
		s.serving.Add(1)
		go func() {
			defer s.serving.Done()
			if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				s.errorLog.Printf("wpt: serving %s: %v", ln.Addr(), err)
			}
		}()
	}
	s.stopWatch = context.AfterFunc(ctx, func() { s.Close() })
	s.started = true
	return nil
}

// Close stops the server and waits for its goroutines. It is safe to call
// more than once, and before Start.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		srv, stopWatch := s.srv, s.stopWatch
		s.mu.Unlock()
		if stopWatch != nil {
			stopWatch()
		}
		if srv != nil {
			s.closeErr = srv.Close()
			s.serving.Wait()
		}
	})
	return s.closeErr
}

// Origin is the main origin, e.g. http://127.0.0.1:8000; "" before Start.
func (s *Server) Origin() string { return s.origin(false, false, "", 0) }

// AltOrigin is the alternate origin, cross-site to Origin.
func (s *Server) AltOrigin() string { return s.origin(false, true, "", 0) }

// Origin2 is the main host on its second port ({{ports[http][1]}}); "" unless
// Options.SecondPort is set.
func (s *Server) Origin2() string { return s.origin(false, false, "", 1) }

// AltOrigin2 is the alternate host on its second port.
func (s *Server) AltOrigin2() string { return s.origin(false, true, "", 1) }

// HTTPSOrigin is the main host over TLS ({{ports[https][0]}}); "" unless
// Options.HTTPS is set.
func (s *Server) HTTPSOrigin() string { return s.origin(true, false, "", 0) }

// HTTPSOrigin2 is the main host on its second TLS port
// ({{ports[https][1]}}); "" unless Options.HTTPS and SecondPort are set.
func (s *Server) HTTPSOrigin2() string { return s.origin(true, false, "", 1) }

// AltHTTPSOrigin is the alternate host over TLS.
func (s *Server) AltHTTPSOrigin() string { return s.origin(true, true, "", 0) }

// URL returns the URL a test (a Test.URL path, with any query) is loaded
// from, chosen as wptrunner does from the flags of its file name: a
// .https., .serviceworker. or .serviceworker-module. test on the first
// HTTPS port when Options.HTTPS is set, and a .www. test on the www
// subdomain ({{domains[www]}}). Everything else is on Origin.
func (s *Server) URL(path string) string {
	name := path
	if i := strings.IndexAny(name, "?#"); i >= 0 {
		name = name[:i]
	}
	flags := strings.Split(name[strings.LastIndexByte(name, '/')+1:], ".")
	if len(flags) > 2 {
		flags = flags[1 : len(flags)-1]
	} else {
		flags = nil
	}
	secure := s.certs != nil && (slices.Contains(flags, "https") ||
		slices.Contains(flags, "serviceworker") || slices.Contains(flags, "serviceworker-module"))
	host := ""
	if slices.Contains(flags, "www") {
		host = s.hosts[""]["www"]
	}
	return s.origin(secure, false, host, 0) + path
}

// origin is scheme://host:port for the i-th HTTP or TLS port of the main or
// alternate host; host, if set, replaces the host name. "" if there is no
// such port (yet).
func (s *Server) origin(secure, alt bool, host string, i int) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	scheme, ports := "http", [2][]int{s.mainPorts, s.altPorts}
	if secure {
		scheme, ports = "https", [2][]int{s.mainTLSPorts, s.altTLSPorts}
	}
	p := ports[0]
	if alt {
		p = ports[1]
	}
	if host == "" {
		host = s.mainHost
		if alt {
			host = s.altHost
		}
	}
	if i >= len(p) {
		return ""
	}
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(p[i]))
}

// TakeUnsupported returns the paths of the Python handlers requested since
// the last call that wdext does not implement (each answered 501), so a
// runner can say why a test failed; it clears the list.
func (s *Server) TakeUnsupported() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.unsupported
	s.unsupported = nil
	return out
}

// maxUnsupported bounds the list kept for TakeUnsupported when no one
// takes it.
const maxUnsupported = 100

// ServeHTTP answers for every origin: mounts first, then Python handlers,
// then the file tree.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Only names that resolve to loopback: a page elsewhere that rebinds
	// its DNS to 127.0.0.1 must not read the tree.
	if !s.ownHost(r.Host) {
		http.Error(w, "wpt: unexpected Host "+r.Host, http.StatusForbidden)
		return
	}
	s.mu.RLock()
	h, st := s.mounted(r.URL.Path), s.site
	s.mu.RUnlock()
	if h != nil {
		h.ServeHTTP(w, r)
		return
	}
	fsrv := &fileServer{root: s.root, site: st}
	var resp *response
	var err error
	switch {
	case isPython(r.URL.Path):
		resp, err = fsrv.python(r) // any method, as wptserve's handlers
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "wpt: method not allowed", http.StatusMethodNotAllowed)
		return
	default:
		resp, err = fsrv.build(s.rewrite(r))
	}
	if err == nil && s.opts.Document != nil && isHTML(resp.header.Get("Content-Type")) {
		if err = resp.load(); err == nil {
			resp.body = s.opts.Document(resp.body, resp.header)
		}
	}
	if err != nil {
		resp.close()
		s.fail(w, r, err)
		return
	}
	resp.write(w, r)
}

// fail answers err: an httpError's status, else 500; the reasons of 5xx
// answers are logged, and 501s kept for TakeUnsupported.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // the client left: no one to answer, nothing to log
	}
	var he *httpError
	if !errors.As(err, &he) {
		he = &httpError{code: http.StatusInternalServerError, msg: err.Error()}
	}
	if he.code == http.StatusNotImplemented {
		s.mu.Lock()
		if len(s.unsupported) < maxUnsupported {
			s.unsupported = append(s.unsupported, r.URL.Path)
		}
		s.mu.Unlock()
	}
	if he.code >= 500 {
		u := r.URL.String()
		if len(u) > 200 { // a query can be a megabyte long
			u = u[:200] + "…"
		}
		s.errorLog.Printf("wpt: %s %s: %d %s", r.Method, u, he.code, he.msg)
	}
	http.Error(w, he.msg, he.code)
}

// rewrites are wptserve's (tools/serve/serve.py): a path that names a file
// somewhere else in the tree. WebIDLParser.js was moved into webidl2/;
// older WPT trees (and wpt-runner's copy) have it one level up.
var rewrites = map[string][]string{
	"/resources/WebIDLParser.js": {"/resources/webidl2/lib/webidl2.js", "/resources/webidl2/webidl2.js"},
}

// rewrite returns r for the file a rewrite names, when there is one.
func (s *Server) rewrite(r *http.Request) *http.Request {
	for _, to := range rewrites[r.URL.Path] {
		if _, err := os.Stat(filepath.Join(s.root, filepath.FromSlash(to))); err == nil {
			r = r.Clone(r.Context())
			r.URL.Path, r.URL.RawPath = to, ""
			return r
		}
	}
	return r
}

// isHTML says whether a Content-Type is an HTML document's (not XHTML,
// where an inserted script element must be namespaced).
func isHTML(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "text/html"
}

// mounted returns the handler mounted for urlPath; s.mu must be held.
func (s *Server) mounted(urlPath string) http.Handler {
	if h, ok := s.mounts[urlPath]; ok {
		return h
	}
	var best string
	for p := range s.mounts {
		if strings.HasSuffix(p, "/") && strings.HasPrefix(urlPath, p) && len(p) > len(best) {
			best = p
		}
	}
	return s.mounts[best]
}

// ownHost reports whether a Host header names this server: a loopback
// name, or with Options.WPTHosts one of WPT's (.test is reserved, so they
// never resolve anywhere else).
func (s *Server) ownHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "127.0.0.1" || host == "::1" || host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	return s.opts.WPTHosts && (host == wptHost || strings.HasSuffix(host, "."+wptHost) ||
		host == wptAltHost || strings.HasSuffix(host, "."+wptAltHost))
}
