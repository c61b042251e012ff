package wkinspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"gotest.tools/v3/assert"
)

// fakeInspector serves the HTTP side of WebKitGTK's remote inspector for
// the target numbers in pages: a listing, and per page a socket whose
// backend answers Runtime.evaluate with the expression, Heap.snapshot from
// workers with their id, fails "Fail.me", ignores "Hang.me" and, for
// "Nav.swap", swaps to a new backend target: at once, or, after
// Target.setPauseOnStart, once Target.resume lets the new target (paused)
// go on, noting the methods the paused target got (prepared). Like
// WebKit, it answers a message for a target it does not have with an
// error, and it counts those sent to nudgeTarget (nudges).
type fakeInspector struct {
	mu        sync.Mutex
	prepared  []string
	nudges    atomic.Int32
	pages     map[int]bool
	automaton int
	opened    atomic.Int32 // automation target opened
	dials     atomic.Int32
	srv       *httptest.Server
}

func (f *fakeInspector) addPage(n int) {
	f.mu.Lock()
	f.pages[n] = true
	f.mu.Unlock()
}

func newFake(t *testing.T, automation int, pages ...int) *fakeInspector {
	f := &fakeInspector{pages: map[int]bool{}, automaton: automation}
	for _, p := range pages {
		f.pages[p] = true
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeInspector) addr() string { return strings.TrimPrefix(f.srv.URL, "http://") }

func (f *fakeInspector) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/" {
		fmt.Fprint(w, `<html><body><div id='targetlist'><table><tr><td><input type="button" onclick="window.open('Main.html?ws=' + window.location.host + '/socket/1/1/WebPage', '_blank')"></td></tr></table></div></body></html>`)
		return
	}
	var n int
	if _, err := fmt.Sscanf(r.URL.Path, "/socket/1/%d/WebPage", &n); err != nil {
		http.NotFound(w, r)
		return
	}
	if n == f.automaton {
		f.opened.Add(1)
	}
	f.dials.Add(1)
	f.mu.Lock()
	isPage := f.pages[n]
	f.mu.Unlock()
	ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	if !isPage {
		for { // a number with no page: silence
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
		}
	}
	page := fmt.Sprintf("page-%d", n)
	var provisional string
	pauseOnStart := false
	send := func(v any) { b, _ := json.Marshal(v); ws.WriteMessage(websocket.TextMessage, b) }
	send(map[string]any{"method": "Target.targetCreated", "params": map[string]any{"targetInfo": map[string]any{"targetId": page, "type": "page"}}})
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var outer struct {
			ID     int64
			Method string
			Params struct {
				TargetID, Message string
				PauseOnStart      bool
			}
		}
		json.Unmarshal(data, &outer)
		switch outer.Method {
		case "Target.setPauseOnStart":
			pauseOnStart = outer.Params.PauseOnStart
			send(map[string]any{"id": outer.ID, "result": map[string]any{}})
			continue
		case "Target.resume":
			send(map[string]any{"id": outer.ID, "result": map[string]any{}})
			if outer.Params.TargetID == provisional {
				send(map[string]any{"method": "Target.didCommitProvisionalTarget", "params": map[string]any{"oldTargetId": page, "newTargetId": provisional}})
				page, provisional = provisional, ""
			}
			continue
		}
		if provisional != "" && outer.Params.TargetID == provisional {
			var in struct {
				ID     int64
				Method string
			}
			json.Unmarshal([]byte(outer.Params.Message), &in)
			f.mu.Lock()
			f.prepared = append(f.prepared, in.Method)
			f.mu.Unlock()
			send(map[string]any{"id": outer.ID, "result": map[string]any{}})
			b, _ := json.Marshal(map[string]any{"id": in.ID, "result": map[string]any{}})
			send(map[string]any{"method": "Target.dispatchMessageFromTarget", "params": map[string]any{"targetId": provisional, "message": string(b)}})
			continue
		}
		if outer.Params.TargetID == nudgeTarget {
			f.nudges.Add(1)
		}
		if outer.Params.TargetID != page {
			send(map[string]any{"id": outer.ID, "error": map[string]any{"code": -32601, "message": "Missing target for given targetId"}})
			continue
		}
		send(map[string]any{"id": outer.ID, "result": map[string]any{}})
		var in struct {
			ID     int64
			Method string
			Params json.RawMessage
		}
		json.Unmarshal([]byte(outer.Params.Message), &in)
		reply := func(v map[string]any) {
			b, _ := json.Marshal(v)
			send(map[string]any{"method": "Target.dispatchMessageFromTarget", "params": map[string]any{"targetId": page, "message": string(b)}})
		}
		switch in.Method {
		case "Runtime.evaluate":
			var p struct{ Expression string }
			json.Unmarshal(in.Params, &p)
			reply(map[string]any{"id": in.ID, "result": map[string]any{"result": map[string]any{"type": "string", "value": p.Expression}, "wasThrown": false}})
		case "Fail.me":
			reply(map[string]any{"id": in.ID, "error": map[string]any{"code": -32000, "message": "failed as asked"}})
		case "Hang.me":
		case "Nav.swap":
			next := page + "-swapped"
			if pauseOnStart {
				provisional = next
				send(map[string]any{"method": "Target.targetCreated", "params": map[string]any{"targetInfo": map[string]any{"targetId": next, "type": "page", "isProvisional": true, "isPaused": true}}})
				reply(map[string]any{"id": in.ID, "result": map[string]any{}})
				continue
			}
			page = next
			send(map[string]any{"method": "Target.targetCreated", "params": map[string]any{"targetInfo": map[string]any{"targetId": page, "type": "page", "isProvisional": true}}})
			send(map[string]any{"method": "Target.didCommitProvisionalTarget", "params": map[string]any{"oldTargetId": "x", "newTargetId": page}})
			reply(map[string]any{"id": in.ID, "result": map[string]any{}})
		case "Worker.enable":
			reply(map[string]any{"method": "Worker.workerCreated", "params": map[string]any{"workerId": "worker:1", "url": "http://a/w.js"}})
			reply(map[string]any{"id": in.ID, "result": map[string]any{}})
		case "Worker.sendMessageToWorker":
			var p struct{ WorkerID, Message string }
			json.Unmarshal(in.Params, &p)
			var wm struct{ ID int64 }
			json.Unmarshal([]byte(p.Message), &wm)
			reply(map[string]any{"id": in.ID, "result": map[string]any{}})
			b, _ := json.Marshal(map[string]any{"id": wm.ID, "result": map[string]any{"snapshotData": "snapshot of " + p.WorkerID}})
			reply(map[string]any{"method": "Worker.dispatchMessageFromWorker", "params": map[string]any{"workerId": p.WorkerID, "message": string(b)}})
		default:
			reply(map[string]any{"id": in.ID, "result": map[string]any{}})
		}
	}
}

func TestListing(t *testing.T) {
	f := newFake(t, 2, 1)
	conn, targets, err := Listing(context.Background(), f.addr())
	assert.NilError(t, err)
	assert.Equal(t, conn, 1)
	assert.DeepEqual(t, targets, []int{1})
}

func TestCalls(t *testing.T) {
	f := newFake(t, 2, 1)
	ctx := context.Background()
	c, err := Dial(ctx, f.addr(), "/socket/1/1/WebPage", time.Second)
	assert.NilError(t, err)
	defer c.Close()

	var v string
	assert.NilError(t, c.Evaluate(ctx, "location.href", &v))
	assert.Equal(t, v, "location.href")
	err = c.Call(ctx, "Fail.me", nil, nil)
	var ie *Error
	assert.Assert(t, errors.As(err, &ie), "%v", err)
	assert.Equal(t, ie.Message, "failed as asked")

	workers, err := c.Workers(ctx)
	assert.NilError(t, err)
	assert.DeepEqual(t, workers, []Worker{{ID: "worker:1", URL: "http://a/w.js"}})
	data, err := c.HeapSnapshot(ctx, "worker:1")
	assert.NilError(t, err)
	assert.Equal(t, data, "snapshot of worker:1")

	// A process swap: commands follow the committed target.
	assert.NilError(t, c.Call(ctx, "Nav.swap", nil, nil))
	assert.NilError(t, c.Evaluate(ctx, "after", &v))
	assert.Equal(t, v, "after")

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	err = c.Call(short, "Hang.me", nil, nil)
	assert.Assert(t, errors.Is(err, context.DeadlineExceeded), "%v", err)

	// Calls pending when the connection ends fail; later ones too.
	done := make(chan error, 1)
	go func() { done <- c.Call(ctx, "Hang.me", nil, nil) }()
	time.Sleep(20 * time.Millisecond)
	c.Close()
	assert.Assert(t, errors.Is(<-done, ErrClosed))
	assert.Assert(t, errors.Is(c.Call(ctx, "Runtime.evaluate", nil, nil), ErrClosed))
}

func TestDialNoPage(t *testing.T) {
	f := newFake(t, 2, 1)
	_, err := Dial(context.Background(), f.addr(), "/socket/1/7/WebPage", 50*time.Millisecond)
	assert.Assert(t, errors.Is(err, ErrNoTarget), "%v", err)
}

// Pages finds pages by number, past gaps, and never opens the automation
// session's target.
func TestPagesProbe(t *testing.T) {
	f := newFake(t, 2, 1, 3, 5)
	b := NewBrowser(f.addr(), 1, 2)
	defer b.Close()
	pages, err := b.Pages(context.Background(), false)
	assert.NilError(t, err)
	assert.Equal(t, len(pages), 3)
	assert.Equal(t, f.opened.Load(), int32(0))
	// Known pages are reused unless asked for fresh ones.
	again, err := b.Pages(context.Background(), false)
	assert.NilError(t, err)
	assert.Equal(t, again[0], pages[0])
}

// A window opened later is found by opening just the next number.
func TestFindNew(t *testing.T) {
	f := newFake(t, 2, 1)
	b := NewBrowser(f.addr(), 1, 2)
	defer b.Close()
	assert.NilError(t, b.SetBootstrap(context.Background(), "boot()", []int{1}))
	f.addPage(3)
	before := f.dials.Load()
	assert.NilError(t, b.FindNew(context.Background(), 1))
	assert.Equal(t, f.dials.Load()-before, int32(1), "opened more than the new page's number")
	pages, err := b.Pages(context.Background(), false)
	assert.NilError(t, err)
	assert.Equal(t, len(pages), 2)
	assert.Equal(t, f.opened.Load(), int32(0))
}

// Pipeline sends its commands at once and decodes every reply; the first
// error is returned. Subscribers see a process swap's commit.
func TestPipelineAndSwapEvent(t *testing.T) {
	f := newFake(t, 2, 1)
	ctx := context.Background()
	c, err := Dial(ctx, f.addr(), "/socket/1/1/WebPage", time.Second)
	assert.NilError(t, err)
	defer c.Close()

	type res struct {
		Result struct{ Value string } `json:"result"`
	}
	var a, b res
	err = c.Pipeline(ctx, "",
		Command{Method: "Runtime.evaluate", Params: map[string]any{"expression": "a"}, Result: &a},
		Command{Method: "Fail.me"},
		Command{Method: "Runtime.evaluate", Params: map[string]any{"expression": "b"}, Result: &b})
	var ie *Error
	assert.Assert(t, errors.As(err, &ie), "%v", err)
	assert.Equal(t, a.Result.Value, "a")
	assert.Equal(t, b.Result.Value, "b")

	p := swap(t, c, "no commit event")
	assert.Assert(t, strings.Contains(p, "page-1-swapped"), p)
}

// swap asks the fake for a navigation to a new backend and returns the
// commit event's params; without one within 5 s the test fails, saying
// none.
func swap(t *testing.T, c *Conn, none string) string {
	t.Helper()
	commits := make(chan string, 4)
	defer c.Subscribe(func(e Event) {
		if e.Method == "Target.didCommitProvisionalTarget" {
			commits <- string(e.Params)
		}
	})()
	assert.NilError(t, c.Call(context.Background(), "Nav.swap", nil, nil))
	select {
	case p := <-commits:
		return p
	case <-time.After(5 * time.Second):
		t.Fatal(none)
		return ""
	}
}

// A navigation to a new process waits, paused, until the prepared
// commands (each once, in order) have reached the new backend; then it
// commits, and the page's commands go to the new backend.
func TestPrepareBackends(t *testing.T) {
	f := newFake(t, 2, 1)
	ctx := context.Background()
	c, err := Dial(ctx, f.addr(), "/socket/1/1/WebPage", time.Second)
	assert.NilError(t, err)
	defer c.Close()
	failed := make(chan error, 4)
	assert.NilError(t, c.PrepareBackends(ctx, func(err error) { failed <- err },
		Command{Method: "Page.enable"}, Command{Method: "Page.setBootstrapScript", Params: map[string]any{"source": "1"}}))
	assert.NilError(t, c.PrepareBackends(ctx, nil,
		Command{Method: "Page.enable"}, Command{Method: "ScriptProfiler.startTracking", Params: map[string]any{"includeSamples": true}}))

	p := swap(t, c, "the paused target was never resumed")
	assert.Assert(t, strings.Contains(p, `"newTargetId":"page-1-swapped"`), p)
	f.mu.Lock()
	got := strings.Join(f.prepared, " ")
	f.mu.Unlock()
	assert.Equal(t, got, "Page.enable Page.setBootstrapScript ScriptProfiler.startTracking")
	var v string
	assert.NilError(t, c.Evaluate(ctx, "after", &v)) // reaches the committed backend
	assert.Equal(t, v, "after")
	select {
	case err := <-failed:
		t.Fatalf("preparing failed: %v", err)
	default:
	}
}

// TestNudges: while a command waits for its reply, the connection nudges
// for as long as a reply can be held, then stops; it stops as soon as
// the reply comes; Nudge nudges with nothing waiting; Close ends it.
func TestNudges(t *testing.T) {
	f := newFake(t, 2, 1)
	ctx := context.Background()
	c, err := Dial(ctx, f.addr(), "/socket/1/1/WebPage", time.Second)
	assert.NilError(t, err)
	defer c.Close()
	nudging := func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.nudging
	}
	// stopped waits for the nudger to stop, then for the fake to have
	// counted every nudge sent, and returns the count.
	stopped := func(within time.Duration) int32 {
		t.Helper()
		deadline := time.Now().Add(within)
		for ; nudging(); time.Sleep(time.Millisecond) {
			assert.Assert(t, time.Now().Before(deadline), "still nudging after %v", within)
		}
		var v string
		assert.NilError(t, c.Evaluate(ctx, "after the nudges", &v)) // they came first
		for ; nudging(); time.Sleep(time.Millisecond) {
		}
		return f.nudges.Load()
	}
	defer func(d time.Duration) { nudgeFor = d }(nudgeFor)
	// Windows long enough for a loaded machine's first tick; at most one
	// nudge a tick, give or take the few stopped's own command makes.
	nudgeFor = 300 * time.Millisecond
	most := func() int32 { return int32(nudgeFor/nudgeEvery) + 10 }

	short, cancel := context.WithTimeout(ctx, 2*nudgeFor)
	defer cancel()
	err = c.Call(short, "Hang.me", nil, nil)
	assert.Assert(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	n := stopped(5 * time.Second)
	assert.Assert(t, n >= 1 && n <= most(), "%d nudges while a command hung", n)

	c.Nudge()
	assert.Assert(t, nudging())
	m := stopped(5*time.Second) - n
	assert.Assert(t, m >= 1 && m <= most(), "%d nudges for Nudge", m)

	// A reply ends the nudging long before the window would.
	nudgeFor = time.Minute
	var v string
	assert.NilError(t, c.Evaluate(ctx, "at once", &v))
	stopped(30 * time.Second)
	assert.Equal(t, v, "at once")

	c.Nudge()
	assert.NilError(t, c.Close()) // waits for the nudger
	assert.Assert(t, !nudging())
	c.Nudge() // on an ended connection: nothing
	assert.Assert(t, !nudging())
}
