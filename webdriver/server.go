package webdriver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine"
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
	// Transport for upstream requests; nil for driver.Transport, with
	// which the proxy carries commands itself (see Proxy).
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
// proxy for everything else.
type Server struct {
	cfg     Config
	proxy   *Proxy
	router  *mux.Router
	handler http.Handler
	client  *http.Client
	// native remembers, per session and command, whether the upstream
	// implements a fallback command itself.
	native sync.Map // nativeKey → bool

	mu      sync.Mutex
	methods map[string][]string // extension path → its methods
	// overrides are the extension routes of classic commands; set up
	// before serving, read-only after.
	overrides *mux.Router
}

type nativeKey struct{ session, path string }

// Command is an extension command bound to a live session. body is the raw
// request body; the returned value is sent as {"value": v}, the error as
// the W3C error envelope.
type Command func(ctx context.Context, s *session.Session, body []byte) (any, error)

// NewServer builds the route table.
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
		router: mux.NewRouter(),
		client: &http.Client{Transport: cfg.Transport},
	}
	r := s.router
	// No redirects to a cleaned path ("//session" → "/session"): a 301
	// without a JSON body is no WebDriver reply, and clients follow it
	// with a GET. Such paths are unknown commands, as for chromedriver.
	r.SkipClean(true)
	// Classic commands go straight to the proxy (see dispatch); a classic
	// path with another method is "unknown method". None of them shares
	// a path with the routes below.
	r.MatcherFunc(func(req *http.Request, _ *mux.RouteMatch) bool {
		return classic.lookup(req.URL.Path) != nil && !s.overridden(req)
	}).HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		methodNotAllowed(classic.lookup(req.URL.Path)...).ServeHTTP(w, req)
	})
	r.HandleFunc("/status", s.status).Methods("GET")
	r.HandleFunc("/session", s.newSession).Methods("POST")
	r.HandleFunc("/session/{id}", s.bidi).Methods("GET").Headers("Upgrade", "websocket")
	r.HandleFunc("/session/{id}", s.deleteSession).Methods("DELETE")
	r.Handle("/session", methodNotAllowed("POST"))
	r.Handle("/session/{id}", methodNotAllowed("DELETE"))
	r.Handle("/status", methodNotAllowed("GET"))
	r.NotFoundHandler = http.HandlerFunc(s.notFound)
	s.handler = stripPrefix("/wd/hub", cfg.Guard.Wrap(s.logged(http.HandlerFunc(s.dispatch))))
	return s
}

// dispatch forwards a classic command that no extension takes over, with
// one table lookup (see classicTable), and routes everything else. It is
// the router's first route without the router's bookkeeping (the route
// and its variables added to the request's context), which forwarding
// does not use: every command pays for it.
func (s *Server) dispatch(w http.ResponseWriter, req *http.Request) {
	if slices.Contains(classic.lookup(req.URL.Path), req.Method) && !s.overridden(req) {
		s.forwardSession(w, req)
		return
	}
	s.router.ServeHTTP(w, req)
}

// ServeHTTP serves the WebDriver endpoint.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Sessions is the registry of live sessions.
func (s *Server) Sessions() *session.Registry { return s.cfg.Sessions }

// Handle adds an extension command at path (relative to the root, with
// {id} for the session). Unknown or dead sessions get "invalid session id"
// before cmd runs. A classic command's path and method take that command
// over from the proxy (an upstream wrapper that adds to what the driver
// does). Handle is for setting up, before the server serves.
func (s *Server) Handle(method, path string, cmd Command) {
	s.route(method, path, func(w http.ResponseWriter, r *http.Request) {
		sess, end, err := s.liveSession(r)
		if err != nil {
			WriteError(w, err)
			return
		}
		defer end()
		s.run(w, r, sess, cmd)
	})
}

// overridden reports whether an extension handles a classic command
// itself (see Handle).
func (s *Server) overridden(req *http.Request) bool {
	if s.overrides == nil {
		return false
	}
	var m mux.RouteMatch
	return s.overrides.Match(req, &m) && m.MatchErr == nil
}

// route adds an extension route. A path may have several methods, added
// one by one; any other method is "unknown method", listing them all.
func (s *Server) route(method, path string, h http.HandlerFunc) {
	s.router.HandleFunc(path, h).Methods(method)
	if slices.Contains(classic.lookup(strings.ReplaceAll(path, "{id}", "x")), method) {
		// A classic command an extension takes over: the classic route,
		// matched first, must step aside for it.
		if s.overrides == nil {
			s.overrides = mux.NewRouter()
		}
		s.overrides.HandleFunc(path, h).Methods(method)
	}
	s.mu.Lock()
	if s.methods == nil {
		s.methods = make(map[string][]string)
	}
	first := s.methods[path] == nil
	s.methods[path] = append(s.methods[path], method)
	s.mu.Unlock()
	if !first {
		return
	}
	allowed := func() []string {
		s.mu.Lock()
		defer s.mu.Unlock()
		return slices.Clone(s.methods[path])
	}
	// Added once, after the path's first method: it must not shadow the
	// methods added later, so it matches only the methods that are not.
	s.router.Path(path).MatcherFunc(func(r *http.Request, _ *mux.RouteMatch) bool {
		return !slices.Contains(allowed(), r.Method)
	}).HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		methodNotAllowed(allowed()...).ServeHTTP(w, r)
	})
}

// HandleFallback adds a command that the upstream may implement itself:
// the first call on a session asks the upstream, and only if it answers
// "unknown command" does cmd run — then and for the rest of the session.
// A native implementation's replies pass through untouched.
func (s *Server) HandleFallback(method, path string, cmd Command) {
	s.route(method, path, func(w http.ResponseWriter, r *http.Request) {
		sess, end, err := s.liveSession(r)
		if err != nil {
			WriteError(w, err)
			return
		}
		defer end()
		key := nativeKey{sess.ID, path}
		if native, known := s.native.Load(key); known && !native.(bool) {
			s.run(w, r, sess, cmd)
			return
		}
		body, err := ReadBody(r)
		if err != nil {
			WriteError(w, err)
			return
		}
		rec := &bufferedReply{header: http.Header{}}
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.proxy.Forward(rec, r, sess.Upstream, sess.Gone)
		if e, ok := wire.ParseError(rec.body.Bytes()); ok && e.Code == wire.UnknownCommand {
			if _, live := s.cfg.Sessions.Get(sess.ID); live {
				s.native.Store(key, false)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			s.run(w, r, sess, cmd)
			return
		}
		// Only a success is a definitive "the upstream implements it": an
		// error (a transport failure, a driver busy or dying) says nothing
		// of the command, and the next call asks again.
		if e, ok := wire.ParseError(rec.body.Bytes()); ok && e.Code == wire.InvalidSessionID {
			s.forget(sess.ID)
		} else if _, live := s.cfg.Sessions.Get(sess.ID); live && rec.status == http.StatusOK {
			s.native.Store(key, true)
		}
		rec.writeTo(w)
	})
}

func (s *Server) run(w http.ResponseWriter, r *http.Request, sess *session.Session, cmd Command) {
	body, err := ReadBody(r)
	if err != nil {
		WriteError(w, err)
		return
	}
	ctx, cancel := untilGone(r.Context(), sess.Gone)
	defer cancel()
	// The server's deadline; a command with its own replaces it (Within).
	ctx, cancelTimeout := context.WithTimeout(context.WithValue(ctx, undeadlinedKey{}, ctx), s.cfg.CommandTimeout)
	defer cancelTimeout()
	v, err := cmd(ctx, sess, body)
	if err != nil {
		we := s.commandError(ctx, r, sess, err)
		if we.Code == wire.InvalidSessionID {
			// The driver ended the session (or died): so does wdext.
			s.forget(sess.ID)
		}
		WriteError(w, we)
		return
	}
	WriteValue(w, v)
}

// commandError maps an extension command's failure to a W3C error: a dead
// driver is "invalid session id", the rest as Within does, against the
// server's own deadline. A failure that names no cause of its own may be
// the session's: its browser died, its window was closed. Then the driver
// says so, and its answer is the client's.
func (s *Server) commandError(ctx context.Context, r *http.Request, sess *session.Session, err error) *wire.Error {
	if sess.Dead() {
		return wire.Errorf(wire.InvalidSessionID, "the driver process that held this session has exited")
	}
	if sess.Ended() {
		return wire.Errorf(wire.InvalidSessionID, "the session was deleted while %s ran", r.URL.Path)
	}
	we := deadlineError(ctx, r.Context(), r.URL.Path, s.cfg.CommandTimeout, err)
	if we.Code != wire.UnknownError && we.Code != wire.UnsupportedOperation {
		return we
	}
	if why := s.sessionState(r.Context(), sess); why != nil {
		why.Message += " (" + r.URL.Path + ": " + we.Message + ")"
		return why
	}
	return we
}

// sessionStateTimeout bounds the question sessionState asks the driver.
const sessionStateTimeout = 3 * time.Second

// sessionState asks the driver for the session's current window and
// returns its error when that is "invalid session id" or "no such window";
// nil otherwise (the session is fine, or the driver does not answer).
func (s *Server) sessionState(ctx context.Context, sess *session.Session) *wire.Error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sessionStateTimeout)
	defer cancel()
	var handle string
	err := sessionDriver(sess, s.client).Do(ctx, http.MethodGet, "window", nil, &handle)
	if err == nil {
		return nil
	}
	if we := wire.AsError(err); we.Code == wire.InvalidSessionID || we.Code == wire.NoSuchWindow {
		return wire.Errorf(we.Code, "%s", we.Message)
	}
	// A driver that does not answer may be one that is exiting: its
	// process is reaped a moment after its connections drop.
	var te *wire.TransportError
	if errors.As(err, &te) && waitClosed(sess.Gone, driverExitGrace) {
		return wire.Errorf(wire.InvalidSessionID, "the driver process that held this session has exited")
	}
	return nil
}

// Within runs f with ctx bounded by timeout (a command's own "timeout"
// parameter) and maps its failure the one way every extension command's
// is mapped: a *Error keeps its code; running out of time is "timeout",
// naming what timed out and what was pending; the rest is "unknown error".
func Within[T any](ctx context.Context, timeout time.Duration, what string, f func(context.Context) (T, error)) (T, error) {
	if base, ok := ctx.Value(undeadlinedKey{}).(context.Context); ok {
		ctx = base // the command's own timeout replaces the server's default
	}
	inner, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := f(inner)
	if err != nil {
		return v, deadlineError(inner, ctx, what, timeout, err)
	}
	return v, nil
}

// undeadlinedKey carries, in a command's context, the context before the
// server's default deadline, so that Within can replace that deadline
// with the command's own (longer or shorter).
type undeadlinedKey struct{}

// deadlineError is the mapping of Within: ctx is the deadline the failure
// ran under, outer the caller's (whose end is not a timeout of ours).
func deadlineError(ctx, outer context.Context, what string, timeout time.Duration, err error) *wire.Error {
	var we *wire.Error
	if errors.As(err, &we) {
		return we
	}
	if errors.Is(err, context.DeadlineExceeded) || (ctx.Err() != nil && outer.Err() == nil) {
		return wire.Errorf(wire.Timeout, "%s did not finish within the timeout of %d ms: %v", what, timeout.Milliseconds(), err)
	}
	return wire.Errorf(wire.UnknownError, "%s: %v", what, err)
}

// liveSession finds the request's session in the registry and marks a
// command under way on it until end is called (a busy session is never
// idle).
func (s *Server) liveSession(r *http.Request) (sess *session.Session, end func(), err error) {
	return s.begin(mux.Vars(r)["id"])
}

func (s *Server) begin(id string) (*session.Session, func(), error) {
	sess, ok := s.cfg.Sessions.Get(id)
	if !ok {
		return nil, nil, s.noSession(id)
	}
	if sess.Dead() {
		s.forget(id)
		return nil, nil, wire.Errorf(wire.InvalidSessionID, "the driver process that held session %q has exited", id)
	}
	end, ok := sess.Begin()
	if !ok {
		return nil, nil, s.noSession(id)
	}
	return sess, end, nil
}

// noSession is the error for a session wdext does not hold, saying why
// wdext ended it if it did.
func (s *Server) noSession(id string) *wire.Error {
	if why, ok := s.cfg.Sessions.Why(id); ok {
		return wire.Errorf(wire.InvalidSessionID, "session %q was deleted by wdext: %s", id, why)
	}
	return wire.Errorf(wire.InvalidSessionID, "no live session with id %q", id)
}

// notFound forwards anything else under a session to the driver: its
// vendor commands (goog/…, se/…) are its own business. It is the router's
// last resort, so extension routes added later still win.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	if sessionOf(r.URL.Path) != "" {
		s.forwardSession(w, r)
		return
	}
	WriteError(w, wire.Errorf(wire.UnknownCommand, "unknown command: %s %s", r.Method, r.URL.Path))
}

// forwardSession proxies a session command to the driver that holds the
// session (or to the current driver, for sessions wdext has not seen).
func (s *Server) forwardSession(w http.ResponseWriter, r *http.Request) {
	id := sessionOf(r.URL.Path)
	if _, known := s.cfg.Sessions.Get(id); known {
		sess, end, err := s.begin(id)
		if err != nil {
			WriteError(w, err)
			return
		}
		defer end()
		// A driver tells of a session it ended (its last window closed, a
		// remote's timeout) only by answering "invalid session id": then
		// wdext forgets it too, and stops what it started for it.
		watch := &sessionEndWatch{statusRecorder: statusRecorder{ResponseWriter: w}}
		s.proxy.Forward(watch, r, sess.Upstream, sess.Gone)
		if watch.ended() {
			s.cfg.Log.Debug("upstream ended the session", "session", id)
			s.forget(id)
		}
		return
	}
	if _, ended := s.cfg.Sessions.Why(id); ended {
		WriteError(w, s.noSession(id))
		return
	}
	in, err := s.cfg.Upstream.Current(r.Context())
	if err != nil {
		WriteError(w, wire.Errorf(wire.InvalidSessionID, "no live session with id %q (and no driver: %v)", id, err))
		return
	}
	s.proxy.Forward(w, r, in.URL, in.Done)
}

// deleteSession forwards Delete Session and drops wdext's state before the
// client hears back: a client that saw the reply must find the session
// gone everywhere.
func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	id := sessionOf(r.URL.Path)
	rec := &bufferedReply{header: http.Header{}}
	s.forwardSession(rec, r)
	s.forget(id)
	rec.writeTo(w)
}

func (s *Server) forget(id string) {
	s.cfg.Sessions.Remove(id)
	if ps, ok := s.cfg.Upstream.(driver.PerSession); ok {
		ps.EndSession(id)
	}
	s.native.Range(func(k, _ any) bool {
		if k.(nativeKey).session == id {
			s.native.Delete(k)
		}
		return true
	})
}

// newSession forwards POST /session, adding the machine defaults in
// managed mode, and records the session from the reply.
func (s *Server) newSession(w http.ResponseWriter, r *http.Request) {
	body, err := ReadBody(r)
	if err != nil {
		WriteError(w, err)
		return
	}
	req, err := decodeObject(body)
	if err != nil {
		WriteError(w, err)
		return
	}
	// A slot for the session, held until it is in the registry (or was
	// not created).
	release, ok := s.cfg.Sessions.Reserve()
	if !ok {
		WriteError(w, wire.Errorf(wire.SessionNotCreated, "%s: delete a session, or create it on another node", s.fullMessage()))
		return
	}
	defer release()
	if s.cfg.Defaults != nil && s.cfg.Upstream.Managed() {
		s.cfg.Defaults.Apply(req)
		body, _ = json.Marshal(req)
	}
	// A client that gives up (its own timeout, a closed connection) does
	// not stop the driver, which creates the session and its browser
	// anyway: the request runs to its end, under the server's deadline,
	// and a session nobody will hear of is deleted at once.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), s.cfg.CommandTimeout)
	defer cancel()
	var in *driver.Instance
	var timeout time.Duration
	// bind tells a per-session upstream what became of its driver.
	bind := func(string, error) {}
	if ps, ok := s.cfg.Upstream.(driver.PerSession); ok {
		in, timeout, bind, err = ps.StartSession(ctx, req)
		if err == nil {
			body, _ = json.Marshal(req)
		}
		if err == nil && timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
	} else {
		in, err = s.cfg.Upstream.Current(ctx)
	}
	if err != nil {
		var we *wire.Error
		if !errors.As(err, &we) {
			we = wire.Errorf(wire.SessionNotCreated, "starting the driver: %v", err)
		}
		WriteError(w, we)
		return
	}
	fail := func(e *wire.Error) {
		bind("", e)
		WriteError(w, e)
	}
	up, err := http.NewRequestWithContext(ctx, http.MethodPost, in.URL.JoinPath("session").String(), bytes.NewReader(body))
	if err != nil {
		fail(wire.Errorf(wire.SessionNotCreated, "%v", err))
		return
	}
	up.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := s.client.Do(up)
	if err != nil {
		s.cfg.Log.Warn("new session failed upstream", "upstream", in.URL.Redacted(), "err", err)
		if ctx.Err() == context.DeadlineExceeded && timeout > 0 {
			fail(wire.Errorf(wire.SessionNotCreated, "upstream driver %s did not create a session within %v (the browser probably failed to start); the driver was stopped", in.URL.Redacted(), timeout))
			return
		}
		fail(wire.Errorf(wire.SessionNotCreated, "upstream driver %s did not answer: %v", in.URL.Redacted(), err))
		return
	}
	defer resp.Body.Close()
	if err := jsonReply(resp); err != nil {
		fail(wire.Errorf(wire.SessionNotCreated, "reading upstream reply: %v", err))
		return
	}
	reply, err := io.ReadAll(resp.Body)
	if err != nil {
		fail(wire.Errorf(wire.SessionNotCreated, "reading upstream reply: %v", err))
		return
	}
	id := ""
	if resp.StatusCode == http.StatusOK {
		reply, id = s.register(ctx, r, reply, in)
	}
	if id == "" {
		bind("", fmt.Errorf("no session created (HTTP %d)", resp.StatusCode))
	} else {
		bind(id, nil)
	}
	if id != "" && r.Context().Err() != nil {
		s.cfg.Log.Info("client left before its new session was created: deleting it", "session", id)
		if sess, ok := s.cfg.Sessions.Get(id); ok {
			s.DeleteSession(ctx, sess, "the client left before the session was created")
		}
		return
	}
	w.Header().Set("Content-Type", wire.ContentType)
	w.WriteHeader(resp.StatusCode)
	w.Write(reply)
}

// register records the session a new-session reply created and points its
// webSocketUrl at wdext. It returns the reply to send to the client.
func (s *Server) register(ctx context.Context, r *http.Request, reply []byte, in *driver.Instance) ([]byte, string) {
	id, caps := newSessionReply(reply)
	if id == "" {
		return reply, ""
	}
	sess := session.New(id, in.URL)
	sess.Gone = in.Done
	sess.Capabilities = caps
	sess.BrowserName, _ = caps["browserName"].(string)
	s.bind(ctx, sess, in)
	if ws, ok := caps["webSocketUrl"].(string); ok {
		if u, err := url.Parse(ws); err == nil {
			sess.BiDiURL = ws
			own := *u
			own.Host = r.Host
			old, _ := json.Marshal(ws)
			rewritten, _ := json.Marshal(own.String())
			reply = bytes.Replace(reply, old, rewritten, 1)
		}
	}
	s.cfg.Sessions.Add(sess)
	s.cfg.Log.Debug("session created", "session", sess.ID, "browser", sess.BrowserName, "upstream", in.URL.Redacted())
	return reply, sess.ID
}

// bind gives the session the engine its upstream makes for it. A binder
// that fails leaves the session without one: its classic commands work,
// and its extension commands say what is missing.
func (s *Server) bind(ctx context.Context, sess *session.Session, in *driver.Instance) {
	if in.Bind == nil {
		return
	}
	e, err := in.Bind(ctx, engine.NewSession{ID: sess.ID, Capabilities: sess.Capabilities, Driver: sessionDriver(sess, s.client)})
	if e == nil {
		// Declined or failed: the session's extension commands say why.
		why := "its upstream's engine did not bind"
		if err != nil {
			why = err.Error()
		}
		s.cfg.Log.Debug("no engine for the session", "session", sess.ID, "why", why)
		e = engine.None(sess.BrowserName, why)
	}
	engine.Bind(sess, e)
}

// newSessionReply reads the session id and capabilities of a new-session
// reply: W3C's {"value": {"sessionId", "capabilities"}}, or the legacy
// dialect's {"sessionId", "status": 0, "value": capabilities} that
// chromedriver still speaks to clients that ask for it.
func newSessionReply(reply []byte) (id string, caps map[string]any) {
	var nr struct {
		SessionID string          `json:"sessionId"`
		Value     json.RawMessage `json:"value"`
	}
	if json.Unmarshal(reply, &nr) != nil {
		return "", nil
	}
	if nr.SessionID != "" {
		json.Unmarshal(nr.Value, &caps)
		return nr.SessionID, caps
	}
	var w3c struct {
		SessionID    string         `json:"sessionId"`
		Capabilities map[string]any `json:"capabilities"`
	}
	if json.Unmarshal(nr.Value, &w3c) != nil {
		return "", nil
	}
	return w3c.SessionID, w3c.Capabilities
}

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
	WriteValue(w, map[string]any{"ready": ready, "message": msg})
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

// Shutdown deletes every live session upstream, concurrently.
func (s *Server) Shutdown(ctx context.Context) {
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
		s.cfg.Log.Info("session idle, deleting", "session", sess.ID, "timeout", timeout)
		s.DeleteSession(ctx, sess, fmt.Sprintf("it was idle for longer than the session timeout (%v)", timeout))
	})
}

func methodNotAllowed(allowed ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		WriteError(w, wire.Errorf(wire.UnknownMethod, "%s is not a method of %s (allowed: %s)", r.Method, r.URL.Path, strings.Join(allowed, ", ")))
	})
}

// stripPrefix serves both "/x" and prefix+"/x": tebeka/selenium and old
// Grid clients default to /wd/hub.
func stripPrefix(prefix string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := strings.CutPrefix(r.URL.Path, prefix); ok && (p == "" || p[0] == '/') {
			r2 := r.Clone(r.Context())
			r2.URL.Path = p
			r2.URL.RawPath = ""
			if p == "" {
				r2.URL.Path = "/"
			}
			r = r2
		}
		next.ServeHTTP(w, r)
	})
}

// bufferedReply captures a reply so it can be inspected before sending.
type bufferedReply struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedReply) Header() http.Header { return b.header }
func (b *bufferedReply) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}
func (b *bufferedReply) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *bufferedReply) writeTo(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	w.WriteHeader(b.status)
	w.Write(b.body.Bytes())
}

// sessionEndWatch passes a proxied reply through and notes whether it is
// the driver's "invalid session id" (a 404 whose body says so; the first
// bytes of a 404 are kept to read it, nothing else is).
type sessionEndWatch struct {
	statusRecorder
	head []byte
}

// maxWatched is how much of a 404 reply is kept: the error code comes
// first in every driver's envelope.
const maxWatched = 4 << 10

func (w *sessionEndWatch) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.status == http.StatusNotFound && len(w.head) < maxWatched {
		w.head = append(w.head, p[:min(len(p), maxWatched-len(w.head))]...)
	}
	return w.ResponseWriter.Write(p)
}

func (w *sessionEndWatch) ended() bool {
	if w.status != http.StatusNotFound {
		return false
	}
	if e, ok := wire.ParseError(w.head); ok {
		return e.Code == wire.InvalidSessionID
	}
	return bytes.Contains(w.head, []byte(`"invalid session id"`))
}
