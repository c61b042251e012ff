package cdp

// These tests run the client against a fake DevTools endpoint (an
// httptest server speaking just enough of CDP): no browser is needed.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/cdproto/tracing"
	"github.com/wdext/wdext/engine/chromium/cdp/cdptest"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// prompt bounds anything that must happen "at once": generous, so that a
// loaded machine under -race does not flake, yet far below the 10 s
// writeTimeout and handshake timeout a hang would show.
const prompt = 2 * time.Second

// The fake browser of these tests (package cdptest).
type (
	fakeRequest = cdptest.Request
	fakeBrowser = cdptest.Server
	fakeConn    = cdptest.Conn
)

var pageInfo = map[string]any{
	"targetId": "page-1", "type": "page", "title": "t", "url": "about:blank",
	"attached": false, "canAccessOpener": false,
}

// fakeDefault answers Target.getTargets with one page, leaves
// Test.hang unanswered and refuses every other method as Chromium does.
func fakeDefault(c *fakeConn, req fakeRequest) {
	switch req.Method {
	case target.CommandGetTargets:
		c.Reply(req, map[string]any{"targetInfos": []any{pageInfo}})
	case "Test.hang":
	default:
		c.ReplyError(req, -32601, fmt.Sprintf("'%s' wasn't found", req.Method))
	}
}

func newFake(t *testing.T, handle func(c *fakeConn, req fakeRequest)) *fakeBrowser {
	t.Helper()
	if handle == nil {
		handle = fakeDefault
	}
	return cdptest.NewServer(t, handle, nil)
}

func dial(t *testing.T, f *fakeBrowser) (*Conn, *fakeConn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), prompt)
	defer cancel()
	c, err := Dial(ctx, f.Addr())
	assert.NilError(t, err)
	t.Cleanup(func() { c.Close() })
	return c, f.Accepted(t, prompt)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), prompt)
	t.Cleanup(cancel)
	return ctx
}

func nextRequest(t *testing.T, sc *fakeConn) fakeRequest {
	t.Helper()
	select {
	case req := <-sc.Requests:
		return req
	case <-time.After(prompt):
		t.Fatal("the fake browser received no command")
		return fakeRequest{}
	}
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(prompt):
		t.Fatalf("%s: not closed after %v", what, prompt)
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A typed command goes out with its method and params and its result comes
// back decoded; a flat session's command carries the session id.
func TestConnCallRoundTrip(t *testing.T) {
	f := newFake(t, nil)
	c, sc := dial(t, f)
	ctx := testCtx(t)

	res, err := cdproto.Call(ctx, c, target.GetTargets, target.GetTargetsParams{})
	assert.NilError(t, err)
	assert.Assert(t, is.Len(res.TargetInfos, 1))
	assert.Check(t, is.Equal(res.TargetInfos[0].TargetID, target.ID("page-1")))
	assert.Check(t, is.Equal(res.TargetInfos[0].Type, "page"))
	req := nextRequest(t, sc)
	assert.Check(t, is.Equal(req.Method, "Target.getTargets"))
	assert.Check(t, is.Equal(req.SessionID, ""))
	assert.Check(t, is.Equal(string(req.Params), "{}"))

	_, err = cdproto.Call(ctx, c.Session("S1"), target.GetTargets, target.GetTargetsParams{})
	assert.NilError(t, err)
	req = nextRequest(t, sc)
	assert.Check(t, is.Equal(req.SessionID, "S1"))
	assert.Check(t, req.ID > 0)
}

// The browser's refusal of a command is a *Error with its code, message
// and data, wrapped with the method's name.
func TestConnCallErrorIsTyped(t *testing.T) {
	f := newFake(t, func(c *fakeConn, req fakeRequest) {
		switch req.Method {
		case "Test.withData":
			c.Send(map[string]any{"id": req.ID, "error": map[string]any{
				"code": -32602, "message": "Invalid parameters", "data": "Failed to deserialize params.x"}})
		default:
			fakeDefault(c, req)
		}
	})
	c, _ := dial(t, f)
	ctx := testCtx(t)

	err := c.Call(ctx, "Nope.nothing", nil, nil)
	var ce *Error
	assert.Assert(t, errors.As(err, &ce), "%v (%T)", err, err)
	assert.Check(t, is.Equal(ce.Code, int64(-32601)))
	assert.Check(t, is.Equal(ce.Message, "'Nope.nothing' wasn't found"))
	assert.Check(t, is.ErrorContains(err, "Nope.nothing"))

	err = c.Call(ctx, "Test.withData", nil, nil)
	assert.Assert(t, errors.As(err, &ce), "%v", err)
	assert.Check(t, is.Equal(ce.Code, int64(-32602)))
	assert.Check(t, is.Equal(ce.Data, "Failed to deserialize params.x"))
	assert.Check(t, is.ErrorContains(err, "Invalid parameters (-32602): Failed to deserialize params.x"))

	// A refusal is not a broken connection.
	_, err = cdproto.Call(ctx, c, target.GetTargets, target.GetTargetsParams{})
	assert.NilError(t, err)
	assert.Check(t, !isClosed(c.Done()))
}

// Replies are matched to calls by id, whatever order they come in.
func TestConnConcurrentCallsOutOfOrder(t *testing.T) {
	const n = 16
	var mu sync.Mutex
	var held []fakeRequest
	f := newFake(t, func(c *fakeConn, req fakeRequest) {
		mu.Lock()
		defer mu.Unlock()
		held = append(held, req)
		if len(held) < n {
			return
		}
		for i := len(held) - 1; i >= 0; i-- {
			c.Reply(held[i], json.RawMessage(held[i].Params))
		}
	})
	c, _ := dial(t, f)
	ctx := testCtx(t)

	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			var res struct{ N int }
			if err := c.Call(ctx, "Test.echo", map[string]int{"N": i}, &res); err != nil {
				errs <- err
			} else if res.N != i {
				errs <- fmt.Errorf("call %d got the reply of call %d", i, res.N)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A browser that goes away, abruptly (a crash: the TCP connection drops)
// or cleanly (a close frame), ends the connection: Done is closed, and
// calls fail at once with ErrClosed, the next ones too.
func TestConnServerDropsSocket(t *testing.T) {
	for _, tc := range []struct {
		name string
		drop func(*fakeConn)
	}{
		{"kill", (*fakeConn).Kill},
		{"close frame", func(c *fakeConn) { c.CloseFrame(prompt) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, nil)
			c, sc := dial(t, f)
			ctx := testCtx(t)

			tc.drop(sc)
			waitClosed(t, c.Done(), "Done")
			for i := range 3 {
				start := time.Now()
				_, err := cdproto.Call(ctx, c, target.GetTargets, target.GetTargetsParams{})
				assert.Check(t, is.ErrorIs(err, ErrClosed), "call %d", i)
				assert.Check(t, time.Since(start) < prompt, "call %d took %v", i, time.Since(start))
			}
			// Subscribing to a closed connection gives a closed channel.
			ch, stop := c.Subscribe("Target.targetCreated")
			defer stop()
			_, ok := <-ch
			assert.Check(t, !ok)
			// Close still works, and again.
			c.Close()
			c.Close()
		})
	}
}

// A call waiting for its reply when the browser goes away returns then,
// with ErrClosed, rather than waiting for its context.
func TestConnInFlightCallFailsWhenServerDrops(t *testing.T) {
	f := newFake(t, nil)
	c, sc := dial(t, f)

	done := make(chan error, 1)
	go func() { done <- c.Call(context.Background(), "Test.hang", nil, nil) }()
	nextRequest(t, sc)
	sc.Kill()
	select {
	case err := <-done:
		assert.Check(t, is.ErrorIs(err, ErrClosed))
	case <-time.After(prompt):
		t.Fatal("the pending call did not end when the connection dropped")
	}
	waitClosed(t, c.Done(), "Done")
}

// A write that fails (here: the client's sending half is shut, while the
// browser still holds the socket open and reading works) fails its call
// at once and closes the connection, so that Done fires for its owner
// to reconnect; later calls fail with ErrClosed.
func TestConnWriteFailureClosesConn(t *testing.T) {
	f := newFake(t, nil)
	c, sc := dial(t, f)
	ctx := testCtx(t)

	tcp, ok := c.ws.NetConn().(*net.TCPConn)
	assert.Assert(t, ok, "%T", c.ws.NetConn())
	assert.NilError(t, tcp.CloseWrite())
	// The browser sees the end of the stream but keeps the socket open.
	waitClosed(t, sc.Gone, "fake's read")
	assert.Check(t, !isClosed(c.Done()), "reading still works: Done must wait for the write")

	start := time.Now()
	err := c.Call(ctx, "Test.hang", nil, nil)
	assert.Check(t, is.ErrorContains(err, "sending Test.hang"))
	assert.Check(t, time.Since(start) < prompt, "took %v", time.Since(start))
	waitClosed(t, c.Done(), "Done")

	err = c.Call(ctx, "Test.hang", nil, nil)
	assert.Check(t, is.ErrorIs(err, ErrClosed))
	c.mu.Lock()
	assert.Check(t, is.Len(c.pending, 0), "the failed call's reply slot is forgotten")
	c.mu.Unlock()
}

// A call whose context ends returns then, and the connection stays good:
// its late reply is dropped, and the next call gets its own reply.
func TestConnCancelledCallKeepsConn(t *testing.T) {
	f := newFake(t, nil)
	c, sc := dial(t, f)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.Call(ctx, "Test.hang", nil, nil)
	assert.Check(t, is.ErrorIs(err, context.DeadlineExceeded))
	assert.Check(t, time.Since(start) < prompt, "took %v", time.Since(start))
	hung := nextRequest(t, sc)

	// Explicit cancellation too.
	ctx2, cancel2 := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Call(ctx2, "Test.hang", nil, nil) }()
	hung2 := nextRequest(t, sc)
	cancel2()
	select {
	case err := <-done:
		assert.Check(t, is.ErrorIs(err, context.Canceled))
	case <-time.After(prompt):
		t.Fatal("a cancelled call did not return")
	}

	// The replies arrive after all, late: nobody waits for them.
	sc.Reply(hung, map[string]any{"targetInfos": []any{}})
	sc.Reply(hung2, map[string]any{"targetInfos": []any{}})

	res, err := cdproto.Call(testCtx(t), c, target.GetTargets, target.GetTargetsParams{})
	assert.NilError(t, err)
	assert.Check(t, is.Len(res.TargetInfos, 1))
	assert.Check(t, !isClosed(c.Done()))
	c.mu.Lock()
	assert.Check(t, is.Len(c.pending, 0))
	c.mu.Unlock()
}

// A call made with a context that has already ended is not sent.
func TestConnCallWithEndedContextIsNotSent(t *testing.T) {
	f := newFake(t, nil)
	c, sc := dial(t, f)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := c.Call(ctx, "Test.never", nil, nil)
	assert.Check(t, is.ErrorIs(err, context.Canceled))

	_, err = cdproto.Call(testCtx(t), c, target.GetTargets, target.GetTargetsParams{})
	assert.NilError(t, err)
	assert.Check(t, is.Equal(nextRequest(t, sc).Method, "Target.getTargets"), "the first command the browser saw")
}

// Subscribe gets the events of its method and session only; stopping the
// subscription, or losing the connection, closes its channel.
func TestConnSubscribeEvents(t *testing.T) {
	f := newFake(t, nil)
	c, sc := dial(t, f)

	created, stopCreated := c.Subscribe(target.TargetCreated.Method)
	inSession, stopInSession := c.Session("S1").Subscribe(tracing.TracingComplete.Method)
	defer stopInSession()
	browserComplete, stopBrowserComplete := c.Subscribe(tracing.TracingComplete.Method)
	defer stopBrowserComplete()

	sc.Event("", "Target.targetCreated", map[string]any{"targetInfo": pageInfo})
	sc.Event("S2", "Tracing.tracingComplete", map[string]any{"dataLossOccurred": false, "stream": "S2"})
	sc.Event("S1", "Tracing.tracingComplete", map[string]any{"dataLossOccurred": false, "stream": "S1"})

	recv := func(ch <-chan jsonv2.Value) jsonv2.Value {
		t.Helper()
		select {
		case v, ok := <-ch:
			assert.Assert(t, ok, "channel closed")
			return v
		case <-time.After(prompt):
			t.Fatal("no event")
			return nil
		}
	}
	var ev target.EventTargetCreated
	assert.NilError(t, jsonv2.Unmarshal(recv(created), &ev))
	assert.Assert(t, ev.TargetInfo != nil)
	assert.Check(t, is.Equal(ev.TargetInfo.TargetID, target.ID("page-1")))

	var tc tracing.EventTracingComplete
	assert.NilError(t, jsonv2.Unmarshal(recv(inSession), &tc))
	assert.Check(t, is.Equal(string(tc.Stream), "S1"), "S1's event, not S2's")

	// The events are in order, so once a later one arrived, an earlier one
	// for the browser session would have been delivered too.
	sc.Event("", "Tracing.tracingComplete", map[string]any{"dataLossOccurred": false, "stream": "browser"})
	tc = tracing.EventTracingComplete{}
	assert.NilError(t, jsonv2.Unmarshal(recv(browserComplete), &tc))
	assert.Check(t, is.Equal(string(tc.Stream), "browser"), "sessions' events stay out of the browser's subscription")
	select {
	case v := <-browserComplete:
		t.Errorf("a session's event reached the browser's subscription: %s", v)
	default:
	}

	stopCreated()
	stopCreated() // idempotent
	_, ok := <-created
	assert.Check(t, !ok, "stopped subscription's channel is closed")

	// The typed iterator over a subscription ends when the connection does.
	it := make(chan error, 1)
	go func() {
		for _, err := range cdproto.Events(context.Background(), c, target.TargetDestroyed) {
			if err != nil {
				it <- err
				return
			}
		}
		it <- nil
	}()
	sc.Kill()
	select {
	case err := <-it:
		assert.NilError(t, err)
	case <-time.After(prompt):
		t.Fatal("the event iterator did not end with the connection")
	}
	waitClosed(t, c.Done(), "Done")
	for _, ch := range []<-chan jsonv2.Value{inSession, browserComplete} {
		select {
		case _, ok := <-ch:
			assert.Check(t, !ok, "subscriptions close with the connection")
		case <-time.After(prompt):
			t.Fatal("a subscription outlived its connection")
		}
	}
}

// A subscriber that stops reading loses events rather than stalling the
// connection for everyone else.
func TestConnSlowSubscriberDoesNotStall(t *testing.T) {
	f := newFake(t, func(c *fakeConn, req fakeRequest) {
		if req.Method == "Test.flood" {
			for range 1100 { // more than a subscription buffers
				c.Event("", "Test.event", map[string]any{})
			}
		}
		fakeDefault(c, req)
	})
	c, _ := dial(t, f)
	_, stop := c.Subscribe("Test.event")
	defer stop()

	err := c.Call(testCtx(t), "Test.flood", nil, nil)
	var ce *Error
	assert.Check(t, errors.As(err, &ce), "the reply after the flood arrives: %v", err)
}

// A brief holder of the browser's tracing is waited for.
func TestLockTracingWaitsForBriefHolder(t *testing.T) {
	b := NewBrowser(nil) // tracing's lock does not use the connection

	unlock, err := b.LockTracing(testCtx(t), "forcesample", false)
	assert.NilError(t, err)

	got := make(chan error, 1)
	var unlock2 func()
	ctx2 := testCtx(t)
	go func() {
		var err error
		unlock2, err = b.LockTracing(ctx2, "allocations", false)
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the second holder did not wait for the first: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	unlock()
	select {
	case err := <-got:
		assert.NilError(t, err)
	case <-time.After(prompt):
		t.Fatal("the second holder was not let in when the first let go")
	}

	// A waiter gives up with its context.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = b.LockTracing(ctx, "third", false)
	assert.Check(t, is.ErrorIs(err, context.DeadlineExceeded))
	var busy *TracingBusyError
	assert.Check(t, !errors.As(err, &busy))
	unlock2()
}

// A long holder (a GC log) is not waited for: the answer is a
// *TracingBusyError naming it, at once.
func TestLockTracingLongHolderIsBusy(t *testing.T) {
	b := NewBrowser(nil)
	unlock, err := b.LockTracing(testCtx(t), "gc-log", true)
	assert.NilError(t, err)

	for _, long := range []bool{false, true} {
		start := time.Now()
		_, err = b.LockTracing(context.Background(), "forcesample", long) // no deadline: must not wait
		var busy *TracingBusyError
		assert.Assert(t, errors.As(err, &busy), "%v", err)
		assert.Check(t, is.Equal(busy.Holder, "gc-log"))
		assert.Check(t, is.ErrorContains(err, "held by gc-log"))
		assert.Check(t, time.Since(start) < prompt)
	}

	unlock()
	unlock, err = b.LockTracing(testCtx(t), "forcesample", false)
	assert.NilError(t, err, "free again once the long holder lets go")
	unlock()
}

// unlock is idempotent: a second call does not free a later holder's lock.
func TestLockTracingUnlockTwice(t *testing.T) {
	b := NewBrowser(nil)
	unlock1, err := b.LockTracing(testCtx(t), "a", false)
	assert.NilError(t, err)
	unlock1()
	unlock2, err := b.LockTracing(testCtx(t), "b", true)
	assert.NilError(t, err)
	unlock1()
	_, err = b.LockTracing(testCtx(t), "c", false)
	var busy *TracingBusyError
	assert.Assert(t, errors.As(err, &busy), "%v", err)
	assert.Check(t, is.Equal(busy.Holder, "b"))
	unlock2()
	unlock3, err := b.LockTracing(testCtx(t), "c", false)
	assert.NilError(t, err)
	unlock3()
}

// IsTracingStarted recognises Chromium's refusal of a second tracing
// session, as it comes back through a call, and nothing else.
func TestTracingStartedError(t *testing.T) {
	f := newFake(t, func(c *fakeConn, req fakeRequest) {
		switch req.Method {
		case tracing.CommandStart:
			c.ReplyError(req, -32000, "Tracing has already been started (possibly in another tab).")
		case "Test.otherServerError":
			c.ReplyError(req, -32000, "Target closed")
		default:
			fakeDefault(c, req)
		}
	})
	c, _ := dial(t, f)
	ctx := testCtx(t)

	_, err := cdproto.Call(ctx, c, tracing.Start, tracing.StartParams{})
	assert.Check(t, IsTracingStarted(err), "%v", err)

	err = c.Call(ctx, "Test.otherServerError", nil, nil)
	assert.Check(t, err != nil)
	assert.Check(t, !IsTracingStarted(err), "%v", err)
	assert.Check(t, !IsTracingStarted(&Error{Code: -32601, Message: "already there"}))
	assert.Check(t, !IsTracingStarted(errors.New("Tracing has already been started")))
	assert.Check(t, !IsTracingStarted(nil))
	assert.Check(t, !IsTracingStarted(ErrClosed))
}

// Attach attaches once per target and keeps the flat session; Forget, or
// the target's disappearing from Targets, makes the next Attach attach
// again.
func TestBrowserAttachCachesSessions(t *testing.T) {
	var attaches atomic.Int32
	live := atomic.Bool{}
	live.Store(true)
	f := newFake(t, func(c *fakeConn, req fakeRequest) {
		switch req.Method {
		case target.CommandAttachToTarget:
			var p struct {
				TargetID string
				Flatten  bool
			}
			json.Unmarshal(req.Params, &p)
			if !p.Flatten {
				c.ReplyError(req, -32602, "flat sessions only, please")
				return
			}
			n := attaches.Add(1)
			c.Reply(req, map[string]any{"sessionId": fmt.Sprintf("%s-session-%d", p.TargetID, n)})
		case target.CommandGetTargets:
			infos := []any{}
			if live.Load() {
				infos = append(infos, pageInfo)
			}
			c.Reply(req, map[string]any{"targetInfos": infos})
		default:
			fakeDefault(c, req)
		}
	})
	conn, _ := dial(t, f)
	b := NewBrowser(conn)
	ctx := testCtx(t)

	s1, err := b.Attach(ctx, "page-1")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(s1.ID, "page-1-session-1"))
	s2, err := b.Attach(ctx, "page-1")
	assert.NilError(t, err)
	assert.Check(t, s1 == s2)
	assert.Check(t, is.Equal(attaches.Load(), int32(1)))

	b.Forget("page-1")
	s3, err := b.Attach(ctx, "page-1")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(s3.ID, "page-1-session-2"))

	pages, err := b.Targets(ctx, "page")
	assert.NilError(t, err)
	assert.Check(t, is.Len(pages, 1))
	s4, err := b.Attach(ctx, "page-1")
	assert.NilError(t, err)
	assert.Check(t, s3 == s4, "a live target keeps its session")

	live.Store(false)
	pages, err = b.Targets(ctx)
	assert.NilError(t, err)
	assert.Check(t, is.Len(pages, 0))
	s5, err := b.Attach(ctx, "page-1")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(s5.ID, "page-1-session-3"), "a gone target's session is forgotten")
}

// Dial reports an endpoint without a websocket URL, and one that is not
// there, without hanging.
func TestConnDialErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"Browser":"Fake/1.0"}`))
	}))
	t.Cleanup(srv.Close)
	_, err := Dial(testCtx(t), srv.Listener.Addr().String())
	assert.Check(t, is.ErrorContains(err, "no webSocketDebuggerUrl"))

	l, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	addr := l.Addr().String()
	l.Close()
	_, err = Dial(testCtx(t), addr)
	assert.Check(t, err != nil && strings.Contains(err.Error(), addr), "%v", err)
}
