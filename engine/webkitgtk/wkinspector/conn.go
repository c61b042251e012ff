package wkinspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Error is an error the inspector returned for a command.
type Error struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// ErrClosed is returned for calls on a closed connection.
var ErrClosed = errors.New("wkinspector: connection closed")

// writeTimeout bounds one WebSocket write.
const writeTimeout = 10 * time.Second

// message is a protocol message at either level.
type message struct {
	ID     int64           `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Event is an event of the page's backend, or of one of its workers
// (Worker set), or of the connection's Target domain
// (Target.targetCreated, Target.didCommitProvisionalTarget: a new
// backend, whose agents start disabled).
type Event struct {
	// Target is the backend target the event comes from: the page's, or
	// a new one PrepareBackends prepares before the page moves to it.
	Target string
	Worker string
	Method string
	Params json.RawMessage
}

// Conn is the WebSocket of one inspectable page target.
type Conn struct {
	ws  *websocket.Conn
	wmu sync.Mutex

	mu     sync.Mutex
	nextID int64
	page   string // the backend target commands go to; "" until created
	pageOn bool   // Page domain enabled on that target
	// contexts are the frames' main-world execution contexts, by frame
	// id, once FrameContexts has enabled Runtime; nil before.
	contexts map[string]int64
	// workers are the page's dedicated workers, once Workers has enabled
	// the Worker domain; nil before.
	workers map[string]Worker
	// prepare is what every new page backend gets before it loads
	// (PrepareBackends), failed who hears when that fails; pausing is
	// set once Target.setPauseOnStart has been asked for.
	prepare   []Command
	failed    []func(error)
	pausing   bool
	preparing sync.WaitGroup // the goroutines preparing backends; Close waits
	ready     chan struct{}
	pending   map[int64]chan *message // by command id
	acks      map[int64]int64         // envelope id → command id
	subs      map[int]func(Event)
	nextSub   int
	err       error
	done      chan struct{}

	// Nudging (nudge.go): the nudger runs while nudging; it nudges until
	// nudgeUntil, and until waitNudgeUntil while a command waits.
	nudging                    bool
	nudgeUntil, waitNudgeUntil time.Time
	nudger                     sync.WaitGroup // Close waits
}

// Dial opens the target at path (/socket/C/T/WebPage) of the inspector's
// HTTP server addr and waits up to wait for its page backend to show
// itself (Target.targetCreated). A path that names no page never does:
// ErrNoTarget.
func Dial(ctx context.Context, addr, path string, wait time.Duration) (*Conn, error) {
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	ws, _, err := d.DialContext(ctx, "ws://"+addr+path, nil)
	if err != nil {
		return nil, fmt.Errorf("wkinspector: opening %s%s: %w", addr, path, err)
	}
	ws.SetReadLimit(1 << 30) // heap snapshots come as one message
	c := &Conn{ws: ws, ready: make(chan struct{}), pending: map[int64]chan *message{}, acks: map[int64]int64{}, subs: map[int]func(Event){}, done: make(chan struct{})}
	go c.read() // owned by c: ends when the socket closes (Close)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-c.ready:
		return c, nil
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return nil, fmt.Errorf("wkinspector: %s%s: %w", addr, path, c.err)
	case <-t.C:
		c.Close()
		return nil, ErrNoTarget
	case <-ctx.Done():
		c.Close()
		return nil, ctx.Err()
	}
}

// ErrNoTarget is Dial's error for a target number with no page behind it.
var ErrNoTarget = errors.New("wkinspector: no page target there")

// Close closes the socket; pending calls fail with ErrClosed.
func (c *Conn) Close() error {
	err := c.ws.Close()
	<-c.done
	c.preparing.Wait() // their calls fail at once now
	c.nudger.Wait()
	return err
}

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

func (c *Conn) read() {
	defer close(c.done)
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			c.fail(err)
			return
		}
		var m message
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		c.dispatch(&m)
	}
}

func (c *Conn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = ErrClosed
	if !errors.Is(err, websocket.ErrCloseSent) && !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		c.err = fmt.Errorf("%w: %v", ErrClosed, err)
	}
	for id, ch := range c.pending {
		ch <- nil // the connection ended
		delete(c.pending, id)
	}
}

// dispatch handles a message of the connection's own level: the Target
// domain's events and the replies to Target.sendMessageToTarget.
func (c *Conn) dispatch(m *message) {
	switch m.Method {
	case "":
		// A reply to Target.sendMessageToTarget: only an error matters,
		// the inner reply comes as an event.
		c.reply(m)
	case "Target.targetCreated":
		var p struct {
			TargetInfo struct {
				TargetID      string `json:"targetId"`
				Type          string `json:"type"`
				IsProvisional bool   `json:"isProvisional"`
				IsPaused      bool   `json:"isPaused"`
			} `json:"targetInfo"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		if p.TargetInfo.Type == "page" && !p.TargetInfo.IsProvisional {
			c.setPage(p.TargetInfo.TargetID)
		}
		c.mu.Lock()
		ours := c.pausing // another frontend's pause is its own to end
		c.mu.Unlock()
		if p.TargetInfo.IsPaused && ours {
			c.prepareAndResume(p.TargetInfo.TargetID, p.TargetInfo.Type == "page")
		}
		c.emit(Event{Method: m.Method, Params: m.Params})
	case "Target.didCommitProvisionalTarget":
		var p struct {
			NewTargetID string `json:"newTargetId"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			c.setPage(p.NewTargetID)
		}
		// After setPage: a subscriber's commands go to the new backend,
		// whose agents start disabled.
		c.emit(Event{Method: m.Method, Params: m.Params})
	case "Target.dispatchMessageFromTarget":
		var p struct {
			TargetID string `json:"targetId"`
			Message  string `json:"message"`
		}
		var inner message
		if json.Unmarshal(m.Params, &p) != nil || json.Unmarshal([]byte(p.Message), &inner) != nil {
			return
		}
		c.inner(p.TargetID, &inner)
	}
}

// inner handles a message of a page backend (target).
func (c *Conn) inner(target string, m *message) {
	if m.Method == "Worker.dispatchMessageFromWorker" {
		var p struct {
			WorkerID string `json:"workerId"`
			Message  string `json:"message"`
		}
		var w message
		if json.Unmarshal(m.Params, &p) != nil || json.Unmarshal([]byte(p.Message), &w) != nil {
			return
		}
		if w.Method != "" {
			c.emit(Event{Target: target, Worker: p.WorkerID, Method: w.Method, Params: w.Params})
			return
		}
		m = &w
	} else if m.Method != "" {
		if c.Page() == target {
			c.track(m) // a new backend's state is its own
		}
		c.emit(Event{Target: target, Method: m.Method, Params: m.Params})
		return
	}
	c.reply(m)
}

// track keeps what FrameContexts and Workers return. WebKit announces
// contexts but not their end: a frame's new document replaces its
// context, and a detached frame takes its context along.
func (c *Conn) track(m *message) {
	switch m.Method {
	case "Runtime.executionContextCreated":
		var p struct {
			Context struct {
				ID      int64  `json:"id"`
				Type    string `json:"type"`
				FrameID string `json:"frameId"`
			} `json:"context"`
		}
		if json.Unmarshal(m.Params, &p) != nil || p.Context.Type != "normal" {
			return
		}
		c.mu.Lock()
		if c.contexts != nil {
			c.contexts[p.Context.FrameID] = p.Context.ID
		}
		c.mu.Unlock()
	case "Worker.workerCreated":
		var w Worker
		if json.Unmarshal(m.Params, &w) != nil {
			return
		}
		c.mu.Lock()
		if c.workers != nil {
			c.workers[w.ID] = w
		}
		c.mu.Unlock()
	case "Worker.workerTerminated":
		var w Worker
		if json.Unmarshal(m.Params, &w) != nil {
			return
		}
		c.mu.Lock()
		delete(c.workers, w.ID)
		c.mu.Unlock()
	case "Page.frameDetached":
		var p struct {
			FrameID string `json:"frameId"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		c.mu.Lock()
		delete(c.contexts, p.FrameID)
		c.mu.Unlock()
	}
}

// reply hands a reply to its caller. The reply to an envelope
// (Target.sendMessageToTarget, Worker.sendMessageToWorker) fails its
// command when it is an error: the command itself never arrived.
func (c *Conn) reply(m *message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := m.ID
	if cmd, ok := c.acks[id]; ok {
		delete(c.acks, id)
		if m.Error == nil {
			return
		}
		id = cmd
	}
	if ch, ok := c.pending[id]; ok {
		ch <- m
		delete(c.pending, id)
	}
}

// Page is the backend target the page's commands go to.
func (c *Conn) Page() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.page
}

func (c *Conn) setPage(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.page == "" {
		close(c.ready)
	}
	if c.page != id {
		// A new backend, with its own agents.
		c.pageOn, c.contexts, c.workers = false, nil, nil
	}
	c.page = id
}

func (c *Conn) emit(e Event) {
	c.mu.Lock()
	subs := make([]func(Event), 0, len(c.subs))
	for _, f := range c.subs {
		subs = append(subs, f)
	}
	c.mu.Unlock()
	for _, f := range subs {
		f(e)
	}
}

// Subscribe calls f, on the connection's reader, for every event of the
// page and its workers until the returned function is called. f must not
// block.
func (c *Conn) Subscribe(f func(Event)) (unsubscribe func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.nextSub
	c.nextSub++
	c.subs[id] = f
	return func() {
		c.mu.Lock()
		delete(c.subs, id)
		c.mu.Unlock()
	}
}
