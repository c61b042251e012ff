package webdriver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/wire"
)

// Command is an extension command bound to a live session. body is the raw
// request body; the returned value is sent as {"value": v}, the error as
// the W3C error envelope.
type Command func(ctx context.Context, s *session.Session, body []byte) (any, error)

// Handle adds an extension command at path (relative to the root, with
// {id} for the session). Unknown or dead sessions get "invalid session id"
// before cmd runs. A classic command's path and method take that command
// over from the proxy (an upstream wrapper that adds to what the driver
// does). Handle is for setting up: it panics once the server serves.
func (s *Server) Handle(method, path string, cmd Command) {
	s.add(method, path, func(w http.ResponseWriter, r *http.Request, sess *session.Session) {
		s.run(w, r, sess, cmd)
	})
}

// add adds an extension route (see newRouter): h runs on the request's
// session, live and marked busy (see liveSession); the rest get its error.
func (s *Server) add(method, path string, h func(http.ResponseWriter, *http.Request, *session.Session)) {
	if s.router != nil {
		panic("webdriver: " + method + " " + path + " added after the server began to serve")
	}
	s.exts = append(s.exts, route{endpoint{method, path}, func(w http.ResponseWriter, r *http.Request) {
		sess, end, err := s.liveSession(r)
		if err != nil {
			wire.WriteError(w, err)
			return
		}
		defer end()
		h(w, r, sess)
	}})
}

// HandleFallback adds a command that the upstream may implement itself:
// the first call on a session asks the upstream, and only if it answers
// "unknown command" does cmd run — then and for the rest of the session.
// A native implementation's replies pass through untouched. Like Handle,
// it is for setting up.
func (s *Server) HandleFallback(method, path string, cmd Command) {
	s.add(method, path, func(w http.ResponseWriter, r *http.Request, sess *session.Session) {
		key := nativeKey{sess.ID, path}
		if native, known := s.native.Load(key); known && !native.(bool) {
			s.run(w, r, sess, cmd)
			return
		}
		body, err := ReadBody(r)
		if err != nil {
			wire.WriteError(w, err)
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
		wire.WriteError(w, err)
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
		wire.WriteError(w, we)
		return
	}
	wire.WriteValue(w, v)
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
