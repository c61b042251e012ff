package cdptest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Request is a command as the fake browser receives it.
type Request struct {
	ID        int64           `json:"id"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params,omitempty"`
}

// Server is the fake endpoint. Versions and Dials count the /json/version
// requests and the websockets accepted.
type Server struct {
	srv      *httptest.Server
	handle   func(c *Conn, req Request)
	version  func(r *http.Request)
	Versions atomic.Int32
	Dials    atomic.Int32

	mu    sync.Mutex
	conns []*Conn
	// connected receives each websocket as it is accepted.
	connected chan *Conn
}

// Conn is the browser's side of one websocket.
type Conn struct {
	WS  *websocket.Conn
	wmu sync.Mutex
	// Requests receives every command, before the handler runs (when a
	// test reads them; none is held back for a test that does not).
	Requests chan Request
	// Gone is closed when reading from the client fails. The fake does
	// not close the socket then: tests decide who closes what.
	Gone chan struct{}
}

// NewServer starts the endpoint until the test ends. handle answers each
// command (nil: none is answered); version, if set, runs before each
// /json/version answer (to hold it, say).
func NewServer(t testing.TB, handle func(c *Conn, req Request), version func(r *http.Request)) *Server {
	t.Helper()
	if handle == nil {
		handle = func(*Conn, Request) {}
	}
	s := &Server{handle: handle, version: version, connected: make(chan *Conn, 64)}
	up := websocket.Upgrader{}
	mux := http.NewServeMux()
	mux.HandleFunc("/json/version", func(w http.ResponseWriter, r *http.Request) {
		s.Versions.Add(1)
		if s.version != nil {
			s.version(r)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{
			"Browser":              "Fake/1.0",
			"webSocketDebuggerUrl": "ws://" + r.Host + "/devtools/browser/fake",
		})
	})
	mux.HandleFunc("/devtools/browser/fake", func(w http.ResponseWriter, r *http.Request) {
		// Counted before the handshake completes, so that a client whose
		// dial has returned always sees its dial counted.
		s.Dials.Add(1)
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			s.Dials.Add(-1)
			return
		}
		c := &Conn{WS: ws, Requests: make(chan Request, 256), Gone: make(chan struct{})}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.connected <- c
		defer close(c.Gone)
		for {
			var req Request
			if err := ws.ReadJSON(&req); err != nil {
				return
			}
			select {
			case c.Requests <- req:
			default:
			}
			s.handle(c, req)
		}
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		s.mu.Lock()
		for _, c := range s.conns {
			c.WS.Close()
		}
		s.mu.Unlock()
		s.srv.Close()
	})
	return s
}

// Conns returns the websockets accepted so far, oldest first.
func (s *Server) Conns() []*Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Conn(nil), s.conns...)
}

// Addr is the endpoint's host:port, a debuggerAddress.
func (s *Server) Addr() string { return s.srv.Listener.Addr().String() }

// Accepted is the browser's side of the next websocket, which must open
// within d.
func (s *Server) Accepted(t testing.TB, d time.Duration) *Conn {
	t.Helper()
	select {
	case c := <-s.connected:
		return c
	case <-time.After(d):
		t.Fatal("the client never opened a websocket")
		return nil
	}
}

// Send writes one message.
func (c *Conn) Send(v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.WS.WriteJSON(v)
}

// Reply answers req with result.
func (c *Conn) Reply(req Request, result any) {
	c.Send(map[string]any{"id": req.ID, "sessionId": req.SessionID, "result": result})
}

// ReplyError answers req with a CDP error.
func (c *Conn) ReplyError(req Request, code int64, message string) {
	c.Send(map[string]any{"id": req.ID, "error": map[string]any{"code": code, "message": message}})
}

// Event sends an event, of a flat session when sessionID is set.
func (c *Conn) Event(sessionID, method string, params any) {
	m := map[string]any{"method": method, "params": params}
	if sessionID != "" {
		m["sessionId"] = sessionID
	}
	c.Send(m)
}

// Kill drops the TCP connection without a websocket close frame, as a
// crashed browser does.
func (c *Conn) Kill() { c.WS.NetConn().Close() }

// CloseFrame closes the websocket cleanly, as a browser that quits does.
func (c *Conn) CloseFrame(d time.Duration) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.WS.WriteControl(websocket.CloseMessage,
		websocket.FormatCloseMessage(websocket.CloseGoingAway, "bye"), time.Now().Add(d))
}
