package marionette

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/wdext/wdext/wire"
)

// MaxMessage bounds one message from Firefox (a full-page screenshot of a
// long page is the largest reply): a longer one ends the connection.
const MaxMessage = 256 << 20

// Conn is a Marionette connection: the one client Firefox's Marionette
// serves. Commands may be sent from several goroutines; Firefox answers
// them in turn.
type Conn struct {
	conn net.Conn

	mu      sync.Mutex
	next    uint64
	pending map[uint64]chan reply
	err     error // why the connection ended; set once

	writes chan []byte
	done   chan struct{}
}

// reply is one of Firefox's answers: [1, id, error, result].
type reply struct {
	err    *wire.Error
	result json.RawMessage
}

// ErrClosed is the error of a command sent on, or cut short by, a closed
// connection.
var ErrClosed = errors.New("marionette: connection closed")

// Dial connects to Marionette at addr, retrying until it listens or ctx
// ends (Firefox opens the port about half a second after it starts), and
// reads Marionette's greeting.
func Dial(ctx context.Context, addr string) (*Conn, error) {
	var d net.Dialer
	for {
		nc, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c, err := handshake(ctx, nc)
			if err == nil {
				return c, nil
			}
			nc.Close()
			if ctx.Err() == nil && errors.Is(err, io.EOF) {
				// Marionette closes a second client at once: another
				// client holds it, or it is not ready yet.
				err = fmt.Errorf("marionette at %s closed the connection (it serves one client at a time): %w", addr, err)
			}
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("marionette at %s: %w (last: %v)", addr, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// handshake reads the greeting and starts the connection's reader and
// writer, which Close stops.
func handshake(ctx context.Context, nc net.Conn) (*Conn, error) {
	if dl, ok := ctx.Deadline(); ok {
		nc.SetReadDeadline(dl)
	}
	r := bufio.NewReader(nc)
	msg, err := readMessage(r)
	if err != nil {
		return nil, err
	}
	var hello struct {
		ApplicationType string `json:"applicationType"`
		Protocol        int    `json:"marionetteProtocol"`
	}
	if err := json.Unmarshal(msg, &hello); err != nil || hello.Protocol != 3 {
		return nil, fmt.Errorf("marionette: unexpected greeting %.200q (want protocol 3)", msg)
	}
	nc.SetReadDeadline(time.Time{})
	c := &Conn{conn: nc, pending: map[uint64]chan reply{}, writes: make(chan []byte), done: make(chan struct{})}
	go c.read(r)
	go c.write()
	return c, nil
}

// Send sends command name with params (nil: {}) and decodes its result
// into result unless nil. Marionette's errors come back as *wire.Error,
// with their W3C codes.
func (c *Conn) Send(ctx context.Context, name string, params, result any) error {
	raw, err := c.Call(ctx, name, params)
	if err != nil || result == nil {
		return err
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("marionette: %s: decoding result: %w", name, err)
	}
	return nil
}

// Call sends command name with params and returns its raw result.
func (c *Conn) Call(ctx context.Context, name string, params any) (json.RawMessage, error) {
	if params == nil {
		params = struct{}{}
	}
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.err
	}
	c.next++
	id := c.next
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()

	msg, err := json.Marshal([]any{0, id, name, params})
	if err != nil {
		return nil, fmt.Errorf("marionette: %s: encoding parameters: %w", name, err)
	}
	select {
	case c.writes <- msg:
	case <-c.done:
		return nil, c.closedErr()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		return r.result, nil
	case <-c.done:
		return nil, c.closedErr()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Done is closed when the connection has ended (Firefox went away, or
// Close).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Close ends the connection; commands waiting fail with ErrClosed.
func (c *Conn) Close() error {
	c.fail(ErrClosed)
	return nil
}

func (c *Conn) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// fail ends the connection with err, once.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	first := c.err == nil
	if first {
		c.err = err
		close(c.done)
	}
	c.mu.Unlock()
	if first {
		c.conn.Close()
	}
}

// write sends what Call queues, until the connection ends.
func (c *Conn) write() {
	for {
		select {
		case msg := <-c.writes:
			frame := make([]byte, 0, len(msg)+12)
			frame = strconv.AppendInt(frame, int64(len(msg)), 10)
			frame = append(frame, ':')
			frame = append(frame, msg...)
			if _, err := c.conn.Write(frame); err != nil {
				c.fail(fmt.Errorf("%w: writing: %v", ErrClosed, err))
				return
			}
		case <-c.done:
			return
		}
	}
}

// read hands each reply to its command, until the connection ends.
func (c *Conn) read(r *bufio.Reader) {
	for {
		msg, err := readMessage(r)
		if err != nil {
			c.fail(fmt.Errorf("%w: %v", ErrClosed, err))
			return
		}
		id, rep, err := parseReply(msg)
		if err != nil {
			c.fail(err)
			return
		}
		c.mu.Lock()
		ch := c.pending[id]
		c.mu.Unlock()
		if ch != nil {
			ch <- rep // buffered, and each id is answered once
		}
	}
}

// readMessage reads one LENGTH:JSON message.
func readMessage(r *bufio.Reader) ([]byte, error) {
	head, err := r.ReadSlice(':')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(string(head[:len(head)-1]))
	if err != nil || n < 0 || n > MaxMessage {
		return nil, fmt.Errorf("marionette: bad message length %.20q", head)
	}
	msg := make([]byte, n)
	_, err = io.ReadFull(r, msg)
	return msg, err
}

// parseReply decodes [1, id, error, result].
func parseReply(msg []byte) (uint64, reply, error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(msg, &parts); err != nil || len(parts) != 4 || string(parts[0]) != "1" {
		return 0, reply{}, fmt.Errorf("marionette: not a reply: %.200q", msg)
	}
	var id uint64
	if err := json.Unmarshal(parts[1], &id); err != nil {
		return 0, reply{}, fmt.Errorf("marionette: reply id %.20q", parts[1])
	}
	if string(parts[2]) != "null" {
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(parts[2], &e); err != nil || e.Error == "" {
			return 0, reply{}, fmt.Errorf("marionette: bad error %.200q", parts[2])
		}
		return id, reply{err: &wire.Error{Code: wire.ErrorCode(e.Error), Message: e.Message}}, nil
	}
	return id, reply{result: parts[3]}, nil
}
