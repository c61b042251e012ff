package wkinspector

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gorilla/websocket"
)

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
	all, page, err := c.register(to, len(cmds))
	if err != nil {
		return err
	}
	defer c.forget(all)
	outs, err := encode(to, page, cmds, all)
	if err != nil {
		return err
	}
	if err := c.write(outs, cmds); err != nil {
		return err
	}
	c.nudgeWhileWaiting()
	return c.await(ctx, cmds, all)
}

// sent is one command sent: its own id, the ids of the envelopes it
// travels in (their replies only matter when they are errors), and where
// its reply arrives.
type sent struct {
	id, outerID, workerID int64
	ch                    chan *message
}

// register gives n commands along the route their ids, and awaits their
// replies; page is the backend target they go to.
func (c *Conn) register(to route, n int) (all []sent, page string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, "", c.err
	}
	page = to.target
	if page == "" {
		page = c.page
	}
	all = make([]sent, n)
	for i := range all {
		s := sent{id: c.newID(), ch: make(chan *message, 1)}
		c.pending[s.id] = s.ch
		if !to.top {
			s.outerID = c.newID()
			c.acks[s.outerID] = s.id
		}
		if to.worker != "" {
			s.workerID = c.newID()
			c.acks[s.workerID] = s.id
		}
		all[i] = s
	}
	return all, page, nil
}

// forget stops awaiting the replies of commands sent.
func (c *Conn) forget(all []sent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range all {
		delete(c.pending, s.id)
		delete(c.acks, s.outerID)
		delete(c.acks, s.workerID)
	}
}

// encode writes each command as sent along the route: in a message to
// the worker, and that in a message to the page backend, unless top.
func encode(to route, page string, cmds []Command, all []sent) ([][]byte, error) {
	outs := make([][]byte, len(cmds))
	for i, cmd := range cmds {
		params := cmd.Params
		if params == nil {
			params = struct{}{}
		}
		s := all[i]
		msg, err := json.Marshal(map[string]any{"id": s.id, "method": cmd.Method, "params": params})
		if err == nil && to.worker != "" {
			msg, err = json.Marshal(map[string]any{"id": s.workerID, "method": "Worker.sendMessageToWorker",
				"params": map[string]any{"workerId": to.worker, "message": string(msg)}})
		}
		if err != nil {
			return nil, err
		}
		if to.top {
			outs[i] = msg
			continue
		}
		outs[i], _ = json.Marshal(map[string]any{"id": s.outerID, "method": "Target.sendMessageToTarget",
			"params": map[string]any{"targetId": page, "message": string(msg)}})
	}
	return outs, nil
}

// write writes the messages of cmds in order, each within writeTimeout.
func (c *Conn) write(outs [][]byte, cmds []Command) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for i, out := range outs {
		c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
		if err := c.ws.WriteMessage(websocket.TextMessage, out); err != nil {
			return fmt.Errorf("wkinspector: sending %s: %w", cmds[i].Method, err)
		}
	}
	return nil
}

// await waits for the replies of every command sent, decodes their
// results, and returns the first error.
func (c *Conn) await(ctx context.Context, cmds []Command, all []sent) error {
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
