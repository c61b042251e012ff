package wpt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configure a Server.
type Options struct {
	// MainHost is {{host}} and the host of Origin: "127.0.0.1" (the
	// default) or "localhost". The other one becomes the alternate,
	// cross-site host of AltOrigin and {{hosts[alt][]}}. "localhost" is what
	// /common/get-host-info.sub.js expects on loopback (see the package
	// documentation).
	MainHost string
	// SecondPort also listens on a second port per host, WPT's
	// {{ports[http][1]}}, which get-host-info.sub.js uses.
	SecondPort bool
	// ErrorLog receives server errors and the reasons for 5xx responses;
	// nil means the log package's standard logger.
	ErrorLog *log.Logger
}

// Server serves a WPT-style tree on loopback under two cross-site hosts.
// Create it with NewServer, add virtual paths with Mount, then Start it.
type Server struct {
	root                string
	opts                Options
	mainHost, altHost   string
	errorLog            *log.Logger
	mu                  sync.RWMutex
	mounts              map[string]http.Handler
	site                *site // ports are known once started
	mainPorts, altPorts []int
	srv                 *http.Server
	stopWatch           func() bool // stops the context watcher
	started, closed     bool
	serving             sync.WaitGroup // one Serve goroutine per listener
	closeOnce           sync.Once
	closeErr            error
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
	switch opts.MainHost {
	case "", main:
	case alt:
		main, alt = alt, main
	default:
		return nil, fmt.Errorf("wpt: MainHost must be 127.0.0.1 or localhost, not %q", opts.MainHost)
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
		errorLog: errorLog,
		mounts:   map[string]http.Handler{},
		site:     newSite(root, main, alt, nil),
	}, nil
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
	var lns []net.Listener
	for range 2 * perHost {
		// Both host names resolve to 127.0.0.1, so every listener binds it.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return fmt.Errorf("wpt: listen: %w", err)
		}
		lns = append(lns, ln)
	}
	for i, ln := range lns {
		port := ln.Addr().(*net.TCPAddr).Port
		if i < perHost {
			s.mainPorts = append(s.mainPorts, port)
		} else {
			s.altPorts = append(s.altPorts, port)
		}
	}
	s.site = newSite(s.root, s.mainHost, s.altHost, s.mainPorts)
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second, ErrorLog: s.errorLog}
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
func (s *Server) Origin() string { return s.origin(s.mainHost, s.mainPorts, 0) }

// AltOrigin is the alternate origin, cross-site to Origin.
func (s *Server) AltOrigin() string { return s.origin(s.altHost, s.altPorts, 0) }

// Origin2 is the main host on its second port ({{ports[http][1]}}); "" unless
// Options.SecondPort is set.
func (s *Server) Origin2() string { return s.origin(s.mainHost, s.mainPorts, 1) }

// AltOrigin2 is the alternate host on its second port.
func (s *Server) AltOrigin2() string { return s.origin(s.altHost, s.altPorts, 1) }

// URL returns the URL of path (e.g. a Test.URL) on the main origin.
func (s *Server) URL(path string) string { return s.Origin() + path }

func (s *Server) origin(host string, ports []int, i int) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if i >= len(ports) {
		return ""
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(ports[i]))
}

// ServeHTTP answers for every origin: mounts first, then the file tree.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Only loopback names: a page elsewhere that rebinds its DNS to
	// 127.0.0.1 must not read the tree.
	if !loopbackHost(r.Host) {
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
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "wpt: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	resp, err := (&fileServer{root: s.root, site: st}).build(r)
	if err != nil {
		var he *httpError
		if !errors.As(err, &he) {
			he = &httpError{code: http.StatusInternalServerError, msg: err.Error()}
		}
		if he.code >= 500 {
			s.errorLog.Printf("wpt: %s %s: %d %s", r.Method, r.URL, he.code, he.msg)
		}
		http.Error(w, he.msg, he.code)
		return
	}
	resp.write(w, r)
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

func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	return host == "127.0.0.1" || host == "::1" || host == "localhost" || strings.HasSuffix(host, ".localhost")
}
