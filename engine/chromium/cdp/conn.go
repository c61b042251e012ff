package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/gorilla/websocket"
)

// Error is an error the browser returned for a command.
type Error struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data,omitempty"`
}

func (e *Error) Error() string {
	if e.Data != "" {
		return fmt.Sprintf("%s (%d): %s", e.Message, e.Code, e.Data)
	}
	return fmt.Sprintf("%s (%d)", e.Message, e.Code)
}

// writeTimeout bounds one websocket write: a browser that does not read
// for this long is gone.
const writeTimeout = 10 * time.Second

// ErrClosed is returned for calls on a closed connection.
var ErrClosed = errors.New("cdp: connection closed")

// Conn is a websocket to a browser's DevTools endpoint. Its methods are
// the browser-level session; Session(id) gives a target's flat session.
type Conn struct {
	ws     *websocket.Conn
	nextID atomic.Int64
	wmu    sync.Mutex // one writer at a time

	mu      sync.Mutex
	pending map[int64]chan *message
	subs    map[subKey][]chan jsonv2.Value
	err     error // set once the read loop ends
	done    chan struct{}
}

type subKey struct{ session, method string }

type message struct {
	ID        int64        `json:"id,omitempty"`
	SessionID string       `json:"sessionId,omitempty"`
	Method    string       `json:"method,omitempty"`
	Params    jsonv2.Value `json:"params,omitzero"`
	Result    jsonv2.Value `json:"result,omitzero"`
	Error     *Error       `json:"error,omitzero"`
}

// BrowserURL asks a DevTools HTTP endpoint (Chromium's debuggerAddress,
// host:port) for its browser websocket URL.
func BrowserURL(ctx context.Context, debuggerAddress string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+debuggerAddress+"/json/version", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("cdp: asking %s for its endpoint: %w", debuggerAddress, err)
	}
	defer resp.Body.Close()
	var v struct {
		WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || v.WebSocketDebuggerURL == "" {
		return "", fmt.Errorf("cdp: %s/json/version has no webSocketDebuggerUrl (%v)", debuggerAddress, err)
	}
	return v.WebSocketDebuggerURL, nil
}

// Dial connects to the browser at a DevTools debuggerAddress (host:port).
func Dial(ctx context.Context, debuggerAddress string) (*Conn, error) {
	wsURL, err := BrowserURL(ctx, debuggerAddress)
	if err != nil {
		return nil, err
	}
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second, ReadBufferSize: 1 << 20, WriteBufferSize: 64 << 10}
	ws, resp, err := d.DialContext(ctx, wsURL, nil)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, fmt.Errorf("cdp: dialing %s: %w", wsURL, err)
	}
	// Heap snapshots and traces arrive as large messages.
	ws.SetReadLimit(1 << 30)
	c := &Conn{
		ws:      ws,
		pending: make(map[int64]chan *message),
		subs:    make(map[subKey][]chan jsonv2.Value),
		done:    make(chan struct{}),
	}
	go c.readLoop() // owned by c: ends when Close closes the socket
	return c, nil
}

// Close closes the websocket and waits for the read loop.
func (c *Conn) Close() error {
	err := c.ws.Close()
	<-c.done
	return err
}

// Done is closed when the connection is gone (closed, or the browser
// went away).
func (c *Conn) Done() <-chan struct{} { return c.done }

func (c *Conn) readLoop() {
	var err error
	for {
		var m message
		_, data, rerr := c.ws.ReadMessage()
		if rerr != nil {
			err = rerr
			break
		}
		if jsonv2.Unmarshal(data, &m) != nil {
			continue
		}
		c.dispatch(&m)
	}
	c.mu.Lock()
	c.err = fmt.Errorf("%w: %v", ErrClosed, err)
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	for k, chs := range c.subs {
		for _, ch := range chs {
			close(ch)
		}
		delete(c.subs, k)
	}
	c.mu.Unlock()
	close(c.done)
}

func (c *Conn) dispatch(m *message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.ID != 0 {
		if ch, ok := c.pending[m.ID]; ok {
			delete(c.pending, m.ID)
			ch <- m
		}
		return
	}
	for _, ch := range c.subs[subKey{m.SessionID, m.Method}] {
		// Subscribers buffer; one that stopped reading must not stall
		// every other caller, so a full buffer drops the event.
		select {
		case ch <- m.Params:
		default:
		}
	}
}

// call sends a command on a session ("" for the browser).
func (c *Conn) call(ctx context.Context, sessionID, method string, params, result any) error {
	id := c.nextID.Add(1)
	ch := make(chan *message, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	c.pending[id] = ch
	c.mu.Unlock()

	msg := message{ID: id, SessionID: sessionID, Method: method}
	if params != nil {
		raw, err := jsonv2.Marshal(params)
		if err != nil {
			c.forget(id)
			return fmt.Errorf("cdp: encoding %s: %w", method, err)
		}
		msg.Params = raw
	}
	data, err := jsonv2.Marshal(msg)
	if err != nil {
		c.forget(id)
		return err
	}
	if err := ctx.Err(); err != nil {
		c.forget(id)
		return fmt.Errorf("cdp: %s: %w", method, err)
	}
	// The write deadline is the connection's, not the call's: gorilla's
	// writes fail for good once one times out, so a short call deadline
	// would break the connection for every later call.
	c.wmu.Lock()
	c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	err = c.ws.WriteMessage(websocket.TextMessage, data)
	c.wmu.Unlock()
	if err != nil {
		c.forget(id)
		// A failed write leaves the socket unusable: close it, so Done
		// fires and owners (the chromium engine) reconnect.
		c.ws.Close()
		return fmt.Errorf("cdp: sending %s: %w", method, err)
	}
	select {
	case <-ctx.Done():
		c.forget(id)
		return fmt.Errorf("cdp: %s: %w", method, ctx.Err())
	case reply, ok := <-ch:
		if !ok {
			return fmt.Errorf("cdp: %s: %w", method, ErrClosed)
		}
		if reply.Error != nil {
			return fmt.Errorf("cdp: %s: %w", method, reply.Error)
		}
		if result != nil && len(reply.Result) > 0 {
			if err := jsonv2.Unmarshal(reply.Result, result); err != nil {
				return fmt.Errorf("cdp: decoding %s result: %w", method, err)
			}
		}
		return nil
	}
}

func (c *Conn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func (c *Conn) subscribe(sessionID, method string) (<-chan jsonv2.Value, func()) {
	ch := make(chan jsonv2.Value, 1024)
	k := subKey{sessionID, method}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		close(ch)
		return ch, func() {}
	}
	c.subs[k] = append(c.subs[k], ch)
	c.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			chs := c.subs[k]
			for i, x := range chs {
				if x == ch {
					c.subs[k] = append(chs[:i], chs[i+1:]...)
					close(ch)
					break
				}
			}
		})
	}
}

// Call runs a browser-level command.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	return c.call(ctx, "", method, params, result)
}

// Subscribe buffers browser-level events of method.
func (c *Conn) Subscribe(method string) (<-chan jsonv2.Value, func()) {
	return c.subscribe("", method)
}

// Session returns the flat session with id (from Target.attachToTarget
// with flatten, or Target.attachedToTarget).
func (c *Conn) Session(id string) *Session { return &Session{conn: c, ID: id} }

// Session is a flat session to one target over a Conn.
type Session struct {
	conn *Conn
	ID   string
	// Values is state that users of the session keep with it (what they
	// enabled or compiled in the target through it), gone with it.
	Values sync.Map
}

// Call runs a command in the target.
func (s *Session) Call(ctx context.Context, method string, params, result any) error {
	return s.conn.call(ctx, s.ID, method, params, result)
}

// Subscribe buffers the target's events of method.
func (s *Session) Subscribe(method string) (<-chan jsonv2.Value, func()) {
	return s.conn.subscribe(s.ID, method)
}

var (
	_ cdproto.Session = (*Conn)(nil)
	_ cdproto.Session = (*Session)(nil)
)
