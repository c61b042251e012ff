package firefox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/wdext/wdext/engine/firefox/marionette"
	"github.com/wdext/wdext/polyfill"
	"github.com/wdext/wdext/wire"
)

// maxBody bounds a request body the translator reads (the server in front
// bounds what clients send; this bounds what reaches Firefox).
const maxBody = 64 << 20

// translator is the W3C WebDriver driver of one Firefox, on loopback: it
// starts the browser at New Session, as geckodriver does, and turns each
// command into its Marionette command. It holds one session.
type translator struct {
	binary string
	start  time.Duration
	stderr io.Writer

	srv  *http.Server
	url  *url.URL
	done chan struct{} // closed by close

	mu       sync.Mutex
	closed   bool
	starting bool // a New Session came: the one this Firefox serves
	browser  *browser
	session  string
	// prompts is the client's unhandledPromptBehavior that the translator
	// carries out (see classicPrompts); "" for none.
	prompts string
}

// newTranslator listens on a loopback port and serves.
func newTranslator(binary string, start time.Duration, stderr io.Writer) (*translator, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	t := &translator{binary: binary, start: start, stderr: stderr, done: make(chan struct{})}
	t.url = &url.URL{Scheme: "http", Host: l.Addr().String()}
	t.srv = &http.Server{Handler: t.handler(), ReadHeaderTimeout: 10 * time.Second}
	go t.srv.Serve(l) // owned by t: close shuts it down
	return t, nil
}

// handler routes the W3C commands.
func (t *translator) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /session", t.newSession)
	mux.HandleFunc("GET /status", t.status)
	mux.HandleFunc("DELETE /session/{id}", t.deleteSession)
	mux.HandleFunc("GET /session/{id}/cookie/{name}", t.namedCookie)
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt.pattern, " ")
		mux.HandleFunc(method+" /session/{id}"+path, func(w http.ResponseWriter, r *http.Request) { t.command(w, r, rt) })
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		wire.WriteError(w, wire.Errorf(wire.UnknownCommand, "%s %s is not a WebDriver command Firefox's translation knows", r.Method, r.URL.Path))
	})
	return mux
}

// newSession processes the capabilities, starts Firefox with their
// moz:firefoxOptions and makes Marionette's session.
func (t *translator) newSession(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := readBody(r, &body); err != nil {
		wire.WriteError(w, err)
		return
	}
	caps, opts, err := processCapabilities(body, t.binary)
	if err != nil {
		wire.WriteError(w, err)
		return
	}
	t.mu.Lock()
	busy := t.starting || t.closed
	t.starting = true
	t.mu.Unlock()
	if busy {
		wire.WriteError(w, wire.Errorf(wire.SessionNotCreated, "this Firefox already holds a session"))
		return
	}
	// A translator closed meanwhile stops the start.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() { // owned here: ends with ctx, cancelled on return
		select {
		case <-t.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	b, err := startBrowser(ctx, opts, t.start, t.stderr)
	if err != nil {
		wire.WriteError(w, wire.Errorf(wire.SessionNotCreated, "%v", err))
		return
	}
	reply, err := t.marionetteSession(ctx, b, caps)
	if err != nil {
		b.kill()
		wire.WriteError(w, err)
		return
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		b.kill()
		wire.WriteError(w, wire.Errorf(wire.SessionNotCreated, "shutting down"))
		return
	}
	t.browser, t.session = b, reply.SessionID
	t.mu.Unlock()
	go t.watch(b) // owned by the browser: ends when it exits
	wire.WriteValue(w, reply)
}

// newSessionReply is New Session's value.
type newSessionReply struct {
	SessionID    string         `json:"sessionId"`
	Capabilities map[string]any `json:"capabilities"`
}

// marionetteSession makes Marionette's session with caps, and puts the
// Profiler polyfill in each of its documents through the session's BiDi
// server, which it asks for whether the client did or not: the client's
// reply has a webSocketUrl only if it asked for one.
func (t *translator) marionetteSession(ctx context.Context, b *browser, caps map[string]any) (newSessionReply, error) {
	asked := caps["webSocketUrl"] == true
	var prompts string
	if !asked {
		prompts = classicPrompts(caps)
	}
	caps["webSocketUrl"] = true
	var reply newSessionReply
	if err := b.conn.Send(ctx, "WebDriver:NewSession", caps, &reply); err != nil {
		return reply, sessionNotCreated(err)
	}
	profiling, err := installHub(ctx, b)
	if err != nil {
		return reply, wire.Errorf(wire.SessionNotCreated, "%v", err)
	}
	preload := polyfill.Script("Profiler")
	if profiling {
		preload += polyfill.EnableSamplerScript
	}
	ws, _ := reply.Capabilities["webSocketUrl"].(string)
	if err := addPreloadScript(ctx, ws, preload); err != nil {
		return reply, wire.Errorf(wire.SessionNotCreated, "putting the Profiler polyfill in the session's documents: %v", err)
	}
	if !asked {
		delete(reply.Capabilities, "webSocketUrl")
	}
	if prompts != "" {
		reply.Capabilities["unhandledPromptBehavior"] = prompts
	}
	t.mu.Lock()
	t.prompts = prompts
	t.mu.Unlock()
	return reply, nil
}

// sessionNotCreated keeps Marionette's invalid argument, and makes the
// rest "session not created".
func sessionNotCreated(err error) error {
	if hasCode(err, wire.InvalidArgument) {
		return err
	}
	return wire.Errorf(wire.SessionNotCreated, "%v", err)
}

// watch ends the translator when its browser exits, so that the session
// ends with it.
func (t *translator) watch(b *browser) {
	select {
	case <-b.group.Exited():
		t.close()
	case <-t.done:
	}
}

func (t *translator) status(w http.ResponseWriter, _ *http.Request) {
	t.mu.Lock()
	ready := t.browser == nil && !t.closed
	t.mu.Unlock()
	msg := "ready to start Firefox"
	if !ready {
		msg = "this Firefox holds a session"
	}
	wire.WriteValue(w, map[string]any{"ready": ready, "message": msg})
}

// conn returns the browser's connection for the session named in r's
// path, or "invalid session id".
func (t *translator) conn(r *http.Request) (*marionette.Conn, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.browser == nil || r.PathValue("id") != t.session {
		return nil, wire.Errorf(wire.InvalidSessionID, "no session %q", r.PathValue("id"))
	}
	return t.browser.conn, nil
}

// deleteSession ends Marionette's session; the browser ends with the
// translator (driver.PerSession's EndSession).
func (t *translator) deleteSession(w http.ResponseWriter, r *http.Request) {
	c, err := t.conn(r)
	if err != nil {
		wire.WriteError(w, err)
		return
	}
	if err := c.Send(r.Context(), "WebDriver:DeleteSession", nil, nil); err != nil && !errors.Is(err, marionette.ErrClosed) {
		wire.WriteError(w, err)
		return
	}
	wire.WriteValue(w, nil)
}

// command sends rt's Marionette command.
func (t *translator) command(w http.ResponseWriter, r *http.Request, rt route) {
	c, err := t.conn(r)
	if err != nil {
		wire.WriteError(w, err)
		return
	}
	var body map[string]any
	if r.Method == http.MethodPost {
		if err := readBody(r, &body); err != nil {
			wire.WriteError(w, err)
			return
		}
	}
	params := rt.params(r, body)
	call := func() (json.RawMessage, error) { return c.Call(r.Context(), rt.command, params) }
	raw, err := call()
	if hasCode(err, wire.UnexpectedAlertOpen) {
		t.mu.Lock()
		prompts := t.prompts
		t.mu.Unlock()
		if prompts != "" {
			raw, err = promptHandled(r.Context(), c, prompts, err, call)
		}
	}
	if err != nil {
		wire.WriteError(w, gone(err))
		return
	}
	if rt.shape == nil {
		wire.WriteValue(w, value(raw))
		return
	}
	v, err := rt.shape(value(raw))
	if err != nil {
		wire.WriteError(w, wire.Errorf(wire.UnknownError, "%s: unexpected result: %v", rt.command, err))
		return
	}
	wire.WriteValue(w, v)
}

// namedCookie is Get Named Cookie: Marionette has only Get All Cookies.
func (t *translator) namedCookie(w http.ResponseWriter, r *http.Request) {
	c, err := t.conn(r)
	if err != nil {
		wire.WriteError(w, err)
		return
	}
	var cookies []map[string]any
	if err := c.Send(r.Context(), "WebDriver:GetCookies", nil, &cookies); err != nil {
		wire.WriteError(w, gone(err))
		return
	}
	for _, ck := range cookies {
		if ck["name"] == r.PathValue("name") {
			wire.WriteValue(w, ck)
			return
		}
	}
	wire.WriteError(w, wire.Errorf(wire.NoSuchCookie, "no cookie named %q", r.PathValue("name")))
}

// gone makes a lost connection the session's end.
func gone(err error) error {
	if errors.Is(err, marionette.ErrClosed) {
		return wire.Errorf(wire.InvalidSessionID, "Firefox has gone away: %v", err)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return wire.Errorf(wire.Timeout, "Firefox did not answer: %v", err)
	}
	return err
}

// readBody decodes a JSON object body (empty is {}).
func readBody(r *http.Request, v *map[string]any) error {
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		return wire.Errorf(wire.InvalidArgument, "reading the body: %v", err)
	}
	if len(b) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil || *v == nil {
		return wire.Errorf(wire.InvalidArgument, "the body must be a JSON object")
	}
	return nil
}

// close ends the session's browser and the server, once.
func (t *translator) close() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	b := t.browser
	close(t.done)
	t.mu.Unlock()
	if b != nil {
		b.kill() // first: the commands waiting on it end
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	t.srv.Shutdown(ctx)
}

func (t *translator) String() string { return fmt.Sprintf("Firefox via Marionette at %s", t.url) }
