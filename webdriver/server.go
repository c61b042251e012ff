package webdriver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/wire"
)

// Config is what a Server is built from.
type Config struct {
	Upstream driver.Upstream
	Sessions *session.Registry
	// Defaults, if set, add what the machine needs to every new-session
	// request (managed mode only: a remote's machine is its own business).
	Defaults driver.Defaults
	Guard    Guard
	Log      *slog.Logger
	// Transport carries upstream requests, proxied and wdext's own; nil
	// means driver.Transport.
	Transport http.RoundTripper
	// CommandTimeout bounds an extension command that sets no deadline of
	// its own (one that does, with Within, replaces it); 0 means
	// DefaultCommandTimeout.
	CommandTimeout time.Duration
	// MaxSessions, if positive, is the most sessions live (and being
	// created) at once: New Session beyond it is "session not created",
	// and /status says ready false while the server is full (wdext serve
	// --max-sessions).
	MaxSessions int
}

// DefaultCommandTimeout bounds an extension command that sets no deadline
// of its own: a hung browser must not hold a client forever.
const DefaultCommandTimeout = 2 * time.Minute

// Server is wdext's WebDriver endpoint: wdext's own commands, and the
// proxy for everything else. A request goes through stripPrefix, the
// Guard, logged, then the router (see newRouter): to the proxy (a classic
// command, or a driver's own under a session), to an extension command
// (see Handle), or to wdext's own new session, delete session and status.
type Server struct {
	cfg    Config
	proxy  *Proxy
	client *http.Client
	// native remembers, per session and command, whether the upstream
	// implements a fallback command itself.
	native sync.Map // nativeKey → bool

	// exts are the extension routes, added before serving; the router
	// is built from them when the first request comes.
	exts    []route
	build   sync.Once
	router  *mux.Router
	handler http.Handler

	deaths driverDeaths
}

type nativeKey struct{ session, path string }

// NewServer returns a server for cfg, with its defaults filled in.
func NewServer(cfg Config) *Server {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Sessions == nil {
		cfg.Sessions = session.NewRegistry()
	}
	if cfg.Guard.Log == nil {
		cfg.Guard.Log = cfg.Log // its refusals in the server's log
	}
	if cfg.Transport == nil {
		cfg.Transport = driver.Transport
	}
	if cfg.CommandTimeout == 0 {
		cfg.CommandTimeout = DefaultCommandTimeout
	}
	if cfg.MaxSessions > 0 {
		cfg.Sessions.SetLimit(cfg.MaxSessions)
	}
	s := &Server{
		cfg:    cfg,
		proxy:  NewProxy(cfg.Transport, cfg.Log),
		client: &http.Client{Transport: cfg.Transport},
	}
	s.handler = stripPrefix("/wd/hub", cfg.Guard.Wrap(s.logged(http.HandlerFunc(s.route))))
	return s
}

// ServeHTTP serves the WebDriver endpoint.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// route hands r to the handler the router matches, built on the first
// request. It calls Match, not the router's ServeHTTP: no handler reads
// mux.Vars or mux.CurrentRoute, so the two request copies that put them
// in the context would be work for nobody. Every request matches: a
// path's last route takes its other methods, NotFoundHandler the rest.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	s.build.Do(func() { s.router = s.newRouter(s.exts) })
	var m mux.RouteMatch
	s.router.Match(r, &m)
	m.Handler.ServeHTTP(w, r)
}

// Sessions is the registry of live sessions.
func (s *Server) Sessions() *session.Registry { return s.cfg.Sessions }

// status answers GET /status in the W3C shape; ready follows the driver,
// and is false while the server is full (Config.MaxSessions).
func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	ready, msg := true, "wdext ready"
	if rd, ok := s.cfg.Upstream.(interface{ Ready(context.Context) bool }); ok && !rd.Ready(ctx) {
		ready, msg = false, "driver not ready"
	}
	if used, limit := s.cfg.Sessions.Capacity(); ready && limit > 0 && used >= limit {
		ready, msg = false, s.fullMessage()
	}
	wire.WriteValue(w, map[string]any{"ready": ready, "message": msg})
}

// fullMessage says that the server holds as many sessions as it may.
func (s *Server) fullMessage() string {
	used, limit := s.cfg.Sessions.Capacity()
	return fmt.Sprintf("wdext is full: %d sessions live or being created, its limit is %d (--max-sessions)", used, limit)
}

// DeleteSession ends a session upstream and forgets it (used on shutdown
// and for --session-timeout); why, if set, is what a client that comes
// back to it is told.
func (s *Server) DeleteSession(ctx context.Context, sess *session.Session, why string) {
	if why != "" {
		s.cfg.Sessions.Note(sess.ID, why)
	}
	defer s.forget(sess.ID)
	if sess.Dead() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := sessionDriver(sess, s.client).Do(ctx, http.MethodDelete, "", nil, nil); err != nil {
		s.cfg.Log.Warn("deleting session upstream", "session", sess.ID, "err", err)
	}
}

// Shutdown deletes every live session upstream, concurrently. The drivers
// that end from now on are not reported as lost.
func (s *Server) Shutdown(ctx context.Context) {
	s.deaths.stopWatching()
	var wg sync.WaitGroup
	for _, sess := range s.cfg.Sessions.All() {
		wg.Add(1)
		go func() { // owned by Shutdown, which waits
			defer wg.Done()
			s.DeleteSession(ctx, sess, "wdext shut down")
		}()
	}
	wg.Wait()
}

// ExpireIdle ends sessions idle longer than timeout until ctx ends.
func (s *Server) ExpireIdle(ctx context.Context, timeout time.Duration) {
	interval := min(timeout/4, 10*time.Second)
	s.cfg.Sessions.ExpireIdle(ctx, timeout, max(interval, 100*time.Millisecond), func(ctx context.Context, sess *session.Session) {
		// The session refuses commands from now on: say why first, before
		// the log line that a client (or a test) may act on.
		why := fmt.Sprintf("it was idle for longer than the session timeout (%v)", timeout)
		s.cfg.Sessions.Note(sess.ID, why)
		s.cfg.Log.Info("session idle, deleting", "session", sess.ID, "timeout", timeout)
		s.DeleteSession(ctx, sess, why)
	})
}
