package wkinspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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

// prepareTimeout bounds preparing a new page backend (PrepareBackends):
// past it, the navigation goes on without what is left.
const prepareTimeout = 5 * time.Second

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

// Call sends a command to the page and decodes its result into result
// (nil to drop it).
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	return c.call(ctx, "", method, params, result)
}

// CallWorker sends a command to the dedicated worker of the page whose
// id Worker.workerCreated gave (Worker.enable must have been sent).
func (c *Conn) CallWorker(ctx context.Context, worker, method string, params, result any) error {
	return c.call(ctx, worker, method, params, result)
}

func (c *Conn) call(ctx context.Context, worker, method string, params, result any) error {
	return c.Pipeline(ctx, worker, Command{Method: method, Params: params, Result: result})
}

// PrepareBackends makes every later navigation that moves the page to a
// new web process wait, before the new document loads, until cmds have
// run on the new backend (Target.setPauseOnStart, then Target.resume
// once they have, or after prepareTimeout). The new backend starts with
// every domain off, and what is enabled once the navigation has
// committed comes after the new document's first scripts have run
// (measured on WebKitGTK 2.50.6: a page that spins at once got no
// periodic samples). Commands of several calls run in the order given,
// each once (an equal method and params is sent once); their results are
// dropped, and failed hears of the first error of each preparation.
func (c *Conn) PrepareBackends(ctx context.Context, failed func(error), cmds ...Command) error {
	c.mu.Lock()
	for _, cmd := range cmds {
		cmd.Result = nil
		if !slices.ContainsFunc(c.prepare, func(p Command) bool { return sameCommand(p, cmd) }) {
			c.prepare = append(c.prepare, cmd)
		}
	}
	if failed != nil {
		c.failed = append(c.failed, failed)
	}
	pausing := c.pausing
	c.pausing = true
	c.mu.Unlock()
	if pausing {
		return nil
	}
	err := c.send(ctx, route{top: true}, Command{Method: "Target.setPauseOnStart", Params: map[string]any{"pauseOnStart": true}})
	if err != nil {
		c.mu.Lock()
		c.pausing = false
		c.mu.Unlock()
	}
	return err
}

func sameCommand(a, b Command) bool {
	if a.Method != b.Method {
		return false
	}
	pa, errA := json.Marshal(a.Params)
	pb, errB := json.Marshal(b.Params)
	return errA == nil && errB == nil && string(pa) == string(pb)
}

// prepareAndResume runs the prepared commands on a new page backend that
// waits paused (a target of another type only waits), then lets it go
// on. It runs on the reader, so the work goes to a goroutine.
func (c *Conn) prepareAndResume(target string, page bool) {
	c.mu.Lock()
	cmds, failed := slices.Clone(c.prepare), slices.Clone(c.failed)
	c.mu.Unlock()
	c.preparing.Add(1)
	go func() { // owned by c: bounded by prepareTimeout, and Close waits
		defer c.preparing.Done()
		ctx, cancel := context.WithTimeout(context.Background(), prepareTimeout)
		defer cancel()
		var err error
		if page && len(cmds) > 0 {
			err = c.send(ctx, route{target: target}, cmds...)
		}
		// Resumed whatever happened, with a deadline of its own: a
		// backend left paused would hang the navigation.
		rctx, rcancel := context.WithTimeout(context.Background(), writeTimeout)
		defer rcancel()
		err = errors.Join(err, c.send(rctx, route{top: true}, Command{Method: "Target.resume", Params: map[string]any{"targetId": target}}))
		if err != nil && !errors.Is(err, ErrClosed) {
			for _, f := range failed {
				f(err)
			}
		}
	}()
}

// Command is one command of a Pipeline: its result is decoded into
// Result (nil to drop it).
type Command struct {
	Method string
	Params any
	Result any
}

// Pipeline sends commands to the page (worker "") or one of its workers
// in one write, in order, so that the backend runs them one after the
// other without waiting for a round trip between them, and waits for
// every reply. It returns the first error.
func (c *Conn) Pipeline(ctx context.Context, worker string, cmds ...Command) error {
	return c.send(ctx, route{worker: worker}, cmds...)
}

// route is where commands go: the connection's own Target domain (top),
// or a page backend (target, "" for the current one) or one of its
// workers.
type route struct {
	top            bool
	target, worker string
}

// send is Pipeline along any route.
func (c *Conn) send(ctx context.Context, to route, cmds ...Command) error {
	type sent struct {
		id, outerID, workerID int64
		ch                    chan *message
	}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	page := to.target
	if page == "" {
		page = c.page
	}
	worker := to.worker
	// Each command's own id, and the ids of the envelopes it travels in:
	// their replies only matter when they are errors.
	all := make([]sent, len(cmds))
	for i := range cmds {
		s := sent{id: c.newID(), ch: make(chan *message, 1)}
		c.pending[s.id] = s.ch
		if !to.top {
			s.outerID = c.newID()
			c.acks[s.outerID] = s.id
		}
		if worker != "" {
			s.workerID = c.newID()
			c.acks[s.workerID] = s.id
		}
		all[i] = s
	}
	c.mu.Unlock()
	forget := func(s sent) {
		c.mu.Lock()
		delete(c.pending, s.id)
		delete(c.acks, s.outerID)
		delete(c.acks, s.workerID)
		c.mu.Unlock()
	}
	defer func() {
		for _, s := range all {
			forget(s)
		}
	}()

	outs := make([][]byte, len(cmds))
	for i, cmd := range cmds {
		params := cmd.Params
		if params == nil {
			params = struct{}{}
		}
		s := all[i]
		msg, err := json.Marshal(map[string]any{"id": s.id, "method": cmd.Method, "params": params})
		if err == nil && worker != "" {
			msg, err = json.Marshal(map[string]any{"id": s.workerID, "method": "Worker.sendMessageToWorker",
				"params": map[string]any{"workerId": worker, "message": string(msg)}})
		}
		if err != nil {
			return err
		}
		if to.top {
			outs[i] = msg
			continue
		}
		outs[i], _ = json.Marshal(map[string]any{"id": s.outerID, "method": "Target.sendMessageToTarget",
			"params": map[string]any{"targetId": page, "message": string(msg)}})
	}
	c.wmu.Lock()
	var err error
	for i, out := range outs {
		c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
		if err = c.ws.WriteMessage(websocket.TextMessage, out); err != nil {
			err = fmt.Errorf("wkinspector: sending %s: %w", cmds[i].Method, err)
			break
		}
	}
	c.wmu.Unlock()
	if err != nil {
		return err
	}
	c.nudgeWhileWaiting()
	var first error
	for i, s := range all {
		method, result := cmds[i].Method, cmds[i].Result
		var err error
		select {
		case m := <-s.ch:
			switch {
			case m == nil:
				c.mu.Lock()
				err = fmt.Errorf("%s: %w", method, c.err)
				c.mu.Unlock()
			case m.Error != nil:
				err = fmt.Errorf("%s: %w", method, m.Error)
			case result != nil && len(m.Result) > 0:
				err = json.Unmarshal(m.Result, result)
			}
		case <-ctx.Done():
			err = fmt.Errorf("%s: %w", method, ctx.Err())
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// newID returns a fresh message id; c.mu is held.
func (c *Conn) newID() int64 {
	c.nextID++
	return c.nextID
}

// remarshal decodes a value already decoded as any into v (nil: dropped).
func remarshal(from, v any) error {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
