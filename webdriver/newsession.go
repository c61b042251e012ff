package webdriver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/wire"
)

// newSession forwards POST /session, adding the driver's defaults in
// managed mode, and records the session from the reply: decode the
// request, hold a slot, start the driver (startDriver), ask it (create),
// register the session, and reply.
func (s *Server) newSession(w http.ResponseWriter, r *http.Request) {
	body, err := ReadBody(r)
	if err != nil {
		wire.WriteError(w, err)
		return
	}
	req, err := decodeObject(body)
	if err != nil {
		wire.WriteError(w, err)
		return
	}
	stackSamples, err := wantsStackSamples(req)
	if err != nil {
		wire.WriteError(w, err)
		return
	}
	// A slot for the session, held until it is in the registry (or was
	// not created).
	release, ok := s.cfg.Sessions.Reserve()
	if !ok {
		wire.WriteError(w, wire.Errorf(wire.SessionNotCreated, "%s: delete a session, or create it on another node", s.fullMessage()))
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
	st, err := s.startDriver(ctx, req, body)
	if err != nil {
		wire.WriteError(w, err)
		return
	}
	defer st.cancel()
	status, reply, err := s.create(st)
	if err != nil {
		st.bind("", err)
		wire.WriteError(w, err)
		return
	}
	id := ""
	if status == http.StatusOK {
		reply, id = s.register(st.ctx, r, reply, st.in, stackSamples)
	}
	if id == "" {
		st.bind("", fmt.Errorf("no session created (HTTP %d)", status))
	} else {
		st.bind(id, nil)
	}
	if id != "" && r.Context().Err() != nil {
		s.cfg.Log.Info("client left before its new session was created: deleting it", "session", id)
		if sess, ok := s.cfg.Sessions.Get(id); ok {
			s.DeleteSession(st.ctx, sess, "the client left before the session was created")
		}
		return
	}
	w.Header().Set("Content-Type", wire.ContentType)
	w.WriteHeader(status)
	w.Write(reply)
}

// starting is a driver ready for a new-session request.
type starting struct {
	in   *driver.Instance
	body []byte // the request, as the driver gets it
	// ctx bounds the request; timeout, if not 0, is the bound the
	// upstream set for it (see driver.PerSession), cancel ends ctx.
	ctx     context.Context
	timeout time.Duration
	cancel  context.CancelFunc
	// bind tells a per-session upstream what became of its driver.
	bind func(id string, err error)
}

// startDriver gets the driver a new session goes to: one of its own from
// a per-session upstream (which may change req, and bound the request's
// time), or the current one.
func (s *Server) startDriver(ctx context.Context, req map[string]any, body []byte) (*starting, error) {
	st := &starting{body: body, ctx: ctx, cancel: func() {}, bind: func(string, error) {}}
	var err error
	if ps, ok := s.cfg.Upstream.(driver.PerSession); ok {
		st.in, st.timeout, st.bind, err = ps.StartSession(ctx, req)
		if err == nil {
			st.body, _ = json.Marshal(req)
		}
		if err == nil && st.timeout > 0 {
			st.ctx, st.cancel = context.WithTimeout(ctx, st.timeout)
		}
	} else {
		st.in, err = s.cfg.Upstream.Current(ctx)
	}
	if err != nil {
		var we *wire.Error
		if !errors.As(err, &we) {
			we = wire.Errorf(wire.SessionNotCreated, "starting the driver: %v", err)
		}
		return nil, we
	}
	return st, nil
}

// create sends the new-session request to the driver and returns its
// reply, made JSON (see jsonReply); a failure is "session not created".
func (s *Server) create(st *starting) (status int, reply []byte, err error) {
	up, err := http.NewRequestWithContext(st.ctx, http.MethodPost, st.in.URL.JoinPath("session").String(), bytes.NewReader(st.body))
	if err != nil {
		return 0, nil, wire.Errorf(wire.SessionNotCreated, "%v", err)
	}
	up.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := s.client.Do(up)
	if err != nil {
		s.cfg.Log.Warn("new session failed upstream", "upstream", st.in.URL.Redacted(), "err", err)
		if st.ctx.Err() == context.DeadlineExceeded && st.timeout > 0 {
			return 0, nil, wire.Errorf(wire.SessionNotCreated, "upstream driver %s did not create a session within %v (the browser probably failed to start); the driver was stopped", st.in.URL.Redacted(), st.timeout)
		}
		return 0, nil, wire.Errorf(wire.SessionNotCreated, "upstream driver %s did not answer: %v", st.in.URL.Redacted(), err)
	}
	defer resp.Body.Close()
	if err := jsonReply(resp); err != nil {
		return 0, nil, wire.Errorf(wire.SessionNotCreated, "reading upstream reply: %v", err)
	}
	reply, err = io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, wire.Errorf(wire.SessionNotCreated, "reading upstream reply: %v", err)
	}
	return resp.StatusCode, reply, nil
}

// register records the session a new-session reply created and points its
// webSocketUrl at wdext. It returns the reply to send to the client.
func (s *Server) register(ctx context.Context, r *http.Request, reply []byte, in *driver.Instance, stackSamples bool) ([]byte, string) {
	id, caps := newSessionReply(reply)
	if id == "" {
		return reply, ""
	}
	sess := session.New(id, in.URL)
	sess.Gone = in.Done
	sess.Capabilities = caps
	sess.BrowserName, _ = caps["browserName"].(string)
	s.bind(ctx, sess, in, stackSamples)
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
	s.watchDriver(in)
	s.cfg.Log.Debug("session created", "session", sess.ID, "browser", sess.BrowserName, "upstream", in.URL.Redacted())
	return reply, sess.ID
}

// bind gives the session the engine its upstream makes for it. A binder
// that fails leaves the session without one: its classic commands work,
// and its extension commands say what is missing.
func (s *Server) bind(ctx context.Context, sess *session.Session, in *driver.Instance, stackSamples bool) {
	if in.Bind == nil {
		return
	}
	e, err := in.Bind(ctx, engine.NewSession{
		ID: sess.ID, Capabilities: sess.Capabilities, Driver: sessionDriver(sess, s.client), StackSamples: stackSamples,
	})
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
