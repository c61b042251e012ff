package webdriver

import (
	"net/http"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/wire"
)

// liveSession finds the request's session ({id} of its route) in the
// registry and marks a command under way on it until end is called (a
// busy session is never idle).
func (s *Server) liveSession(r *http.Request) (sess *session.Session, end func(), err error) {
	id := sessionOf(r.URL.Path)
	sess, ok := s.cfg.Sessions.Get(id)
	if !ok {
		return nil, nil, s.noSession(id)
	}
	if end, err = s.enter(sess); err != nil {
		return nil, nil, err
	}
	return sess, end, nil
}

// enter marks a command under way on sess until end is called; a session
// whose driver died, or that ended meanwhile, is "invalid session id".
func (s *Server) enter(sess *session.Session) (end func(), err error) {
	if sess.Dead() {
		s.forget(sess.ID)
		return nil, wire.Errorf(wire.InvalidSessionID, "the driver process that held session %q has exited", sess.ID)
	}
	end, ok := sess.Begin()
	if !ok {
		return nil, s.noSession(sess.ID)
	}
	return end, nil
}

// noSession is the error for a session wdext does not hold, saying why
// wdext ended it if it did.
func (s *Server) noSession(id string) *wire.Error {
	if why, ok := s.cfg.Sessions.Why(id); ok {
		return wire.Errorf(wire.InvalidSessionID, "session %q was deleted by wdext: %s", id, why)
	}
	return wire.Errorf(wire.InvalidSessionID, "no live session with id %q", id)
}

// forwardSession proxies a session command to the driver that holds the
// session (or to the current driver, for sessions wdext has not seen).
func (s *Server) forwardSession(w http.ResponseWriter, r *http.Request) {
	id := sessionOf(r.URL.Path)
	sess, known := s.cfg.Sessions.Get(id)
	if !known {
		s.forwardUnseen(w, r, id)
		return
	}
	end, err := s.enter(sess)
	if err != nil {
		wire.WriteError(w, err)
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
}

// forwardUnseen proxies a command of a session wdext does not hold to the
// current driver (a session created before wdext started, or by another
// client of the driver), unless wdext ended that session itself.
func (s *Server) forwardUnseen(w http.ResponseWriter, r *http.Request, id string) {
	if _, ended := s.cfg.Sessions.Why(id); ended {
		wire.WriteError(w, s.noSession(id))
		return
	}
	in, err := s.cfg.Upstream.Current(r.Context())
	if err != nil {
		wire.WriteError(w, wire.Errorf(wire.InvalidSessionID, "no live session with id %q (and no driver: %v)", id, err))
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
