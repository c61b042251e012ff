package marionette_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/firefox/marionette"
	"github.com/wdext/wdext/wire"
)

// fake is a Marionette that greets with hello and answers each command
// with answer(name, params) as [1, id, err, result] bodies.
func fake(t *testing.T, hello string, answer func(name string, params json.RawMessage) string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serve(c, hello, answer)
		}
	}()
	return l.Addr().String()
}

func serve(c net.Conn, hello string, answer func(string, json.RawMessage) string) {
	defer c.Close()
	fmt.Fprintf(c, "%d:%s", len(hello), hello)
	r := bufio.NewReader(c)
	for {
		head, err := r.ReadString(':')
		if err != nil {
			return
		}
		n, _ := strconv.Atoi(strings.TrimSuffix(head, ":"))
		msg := make([]byte, n)
		if _, err := io.ReadFull(r, msg); err != nil {
			return
		}
		var cmd []json.RawMessage
		json.Unmarshal(msg, &cmd)
		var name string
		json.Unmarshal(cmd[2], &name)
		out := answer(name, cmd[3])
		if out == "" {
			continue
		}
		reply := fmt.Sprintf("[1,%s,%s]", cmd[1], out)
		fmt.Fprintf(c, "%d:%s", len(reply), reply)
	}
}

const hello = `{"applicationType":"gecko","marionetteProtocol":3}`

func dial(t *testing.T, addr string) *marionette.Conn {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := marionette.Dial(ctx, addr)
	assert.NilError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestSendAndErrors(t *testing.T) {
	addr := fake(t, hello, func(name string, params json.RawMessage) string {
		switch name {
		case "WebDriver:GetTitle":
			return `null,{"value":"T"}`
		case "WebDriver:Navigate":
			return `{"error":"invalid argument","message":"url","stacktrace":"x"},null`
		}
		return `{"error":"unknown command","message":"` + name + `"},null`
	})
	c := dial(t, addr)
	var title struct{ Value string }
	assert.NilError(t, c.Send(context.Background(), "WebDriver:GetTitle", nil, &title))
	assert.Equal(t, title.Value, "T")
	err := c.Send(context.Background(), "WebDriver:Navigate", map[string]any{"url": 5}, nil)
	var we *wire.Error
	assert.Assert(t, errors.As(err, &we), "%v", err)
	assert.Equal(t, we.Code, wire.InvalidArgument)
}

func TestBadGreeting(t *testing.T) {
	addr := fake(t, `{"applicationType":"gecko","marionetteProtocol":2}`, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := marionette.Dial(ctx, addr)
	assert.ErrorContains(t, err, "want protocol 3")
}

// A command Firefox never answers ends with its context; one waiting when
// the connection ends fails with ErrClosed.
func TestNoAnswerAndClose(t *testing.T) {
	addr := fake(t, hello, func(string, json.RawMessage) string { return "" })
	c := dial(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := c.Send(ctx, "WebDriver:Hang", nil, nil)
	assert.Assert(t, errors.Is(err, context.DeadlineExceeded), "%v", err)

	done := make(chan error, 1)
	go func() { done <- c.Send(context.Background(), "WebDriver:Hang", nil, nil) }()
	time.Sleep(50 * time.Millisecond)
	c.Close()
	assert.Assert(t, errors.Is(<-done, marionette.ErrClosed))
	assert.Assert(t, errors.Is(c.Send(context.Background(), "x", nil, nil), marionette.ErrClosed))
}

// A message too long ends the connection rather than being buffered.
func TestMessageTooLong(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	defer l.Close()
	go func() {
		s, err := l.Accept()
		if err != nil {
			return
		}
		defer s.Close()
		fmt.Fprintf(s, "%d:%s", len(hello), hello)
		fmt.Fprintf(s, "%d:", marionette.MaxMessage+1)
		io.Copy(io.Discard, s)
	}()
	c := dial(t, l.Addr().String())
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a message over MaxMessage did not end the connection")
	}
	assert.ErrorContains(t, c.Send(context.Background(), "x", nil, nil), "bad message length")
}
