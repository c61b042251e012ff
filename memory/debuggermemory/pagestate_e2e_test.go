package debuggermemory_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/systeminfo"
	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/engine/chromium/cdp"
	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/memory"
	"github.com/wdext/wdext/memory/debuggermemory"
	"github.com/wdext/wdext/wire"
)

// rawSession is a session driven over plain HTTP, whose errors and reply
// times the page-state tests look at.
type rawSession struct {
	base, id string
	caps     map[string]any
}

func newRawSession(t *testing.T, url string) *rawSession {
	t.Helper()
	var created struct {
		SessionID    string         `json:"sessionId"`
		Capabilities map[string]any `json:"capabilities"`
	}
	body := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{"browserName": "chrome"}}}
	assert.NilError(t, wire.Call(context.Background(), http.DefaultClient, "POST", url+"/session", body, &created))
	s := &rawSession{base: url, id: created.SessionID, caps: created.Capabilities}
	t.Cleanup(func() { s.do("DELETE", "", nil, 20*time.Second) })
	return s
}

// do sends a command of the session; a client-side timeout is an error
// with code "(no reply)".
func (s *rawSession) do(method, path string, body any, timeout time.Duration) (json.RawMessage, *wire.Error, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out json.RawMessage
	start := time.Now()
	err := wire.Call(ctx, http.DefaultClient, method, s.base+"/session/"+s.id+path, body, &out)
	took := time.Since(start)
	var we *wire.Error
	switch {
	case err == nil:
		return out, nil, took
	case errors.As(err, &we):
		return nil, we, took
	}
	return nil, &wire.Error{Code: "(no reply)", Message: err.Error()}, took
}

func (s *rawSession) ok(t *testing.T, method, path string, body any) json.RawMessage {
	t.Helper()
	raw, we, _ := s.do(method, path, body, 30*time.Second)
	assert.Assert(t, we == nil, "%s %s: %v", method, path, we)
	return raw
}

func (s *rawSession) script(t *testing.T, script string) {
	t.Helper()
	s.ok(t, "POST", "/execute/sync", map[string]any{"script": script, "args": []any{}})
}

// browser dials the session's browser for the test's own use.
func (s *rawSession) browser(t *testing.T) *cdp.Browser {
	t.Helper()
	conn, err := cdp.Dial(context.Background(), chromium.DebuggerAddress(s.caps))
	assert.NilError(t, err)
	b := cdp.NewBrowser(conn)
	t.Cleanup(func() { b.Close() })
	return b
}

// prompt is how soon a command on a page in a bad state must answer:
// the engine's liveness probe and its check for a running script take
// 2–3 s, and asking the driver about a prompt up to 5 s more.
const prompt = 12 * time.Second // on a loaded machine: measured 3 s idle

type stateCase struct {
	code wire.ErrorCode
	says []string // in the message
}

// Each command on a page whose main thread is busy in a loop, blocked by
// an alert or whose renderer crashed answers within seconds, with the
// W3C error of that state (chromedriver's "tab crashed" for a crash), and
// not after the server's two-minute deadline.
func TestCommandsOnBadPages(t *testing.T) {
	env := chromiumtest.Start(t, forcesample.Register, memory.Register, debuggermemory.Register)
	busy := e2e.NewBusyLoop()
	pages := e2e.ServePages(t, e2e.Testdata(), map[string]http.Handler{e2e.BusyPath: busy})
	states := []struct {
		name  string
		enter func(t *testing.T, s *rawSession)
		want  stateCase
	}{
		{"busy", func(t *testing.T, s *rawSession) {
			t.Cleanup(busy.Stop) // before the session's end
			s.script(t, busy.Script())
			busy.Go()
			time.Sleep(time.Second)
			// A prompt timeout; its message varies: "busy"; "blocked"
			// where the command's first session to the page is attached
			// while it loops (it answers nothing); chromedriver itself
			// still waiting on the page.
		}, stateCase{wire.Timeout, nil}},
		{"alert", func(t *testing.T, s *rawSession) {
			s.script(t, `setTimeout(() => alert("hello there"), 10)`)
			// Open once chromedriver sees it: until then the page may
			// still be busy (on CI's loaded run the first command found
			// its main thread busy, and the alert open only after).
			for i := 0; ; i++ {
				if _, we, _ := s.do("GET", "/alert/text", nil, 30*time.Second); we == nil {
					break
				}
				assert.Assert(t, i < 100, "no alert")
				time.Sleep(100 * time.Millisecond)
			}
		}, stateCase{wire.UnexpectedAlertOpen, []string{"hello there"}}},
		{"crashed", func(t *testing.T, s *rawSession) {
			// chromedriver answers the navigation itself with "tab crashed".
			s.do("POST", "/url", map[string]any{"url": "chrome://crash"}, 30*time.Second)
		}, stateCase{chromium.TabCrashed, []string{"crashed", "delete the session"}}},
	}
	for _, st := range states {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			s := newRawSession(t, env.URL)
			s.ok(t, "POST", "/url", map[string]any{"url": pages.A + "/debuggermemory/foo.html"})
			// Trackers started while the page was well, stopped after.
			s.ok(t, "POST", "/wdext/memory/allocations", map[string]any{"trackingAllocationSites": true})
			s.ok(t, "POST", "/wdext/memory/live-objects/start", map[string]any{})
			st.enter(t, s)
			time.Sleep(200 * time.Millisecond)
			for _, c := range []struct {
				path string
				body any
			}{
				{"/wdext/memory/census", map[string]any{}},
				{"/wdext/memory/census", map[string]any{"targets": "all"}},
				{"/wdext/memory/allocations/drain", map[string]any{}},
				{"/wdext/memory/live-objects/stop", map[string]any{}},
				{"/wdext/memory/allocations", map[string]any{"trackingAllocationSites": true}},
				{"/wdext/memory/live-objects/start", map[string]any{}},
				{"/wdext/memory/measure", map[string]any{}},
				{"/wdext/memory/gc", map[string]any{}},
				{"/forcesample", map[string]any{}},
			} {
				_, we, took := s.do("POST", c.path, c.body, 20*time.Second)
				t.Logf("%s %v: %v after %v", c.path, c.body, we, took.Round(time.Millisecond))
				if !assert.Check(t, we != nil, "%s succeeded", c.path) {
					continue
				}
				assert.Check(t, we.Code == st.want.code, "%s: %v", c.path, we)
				for _, w := range st.want.says {
					assert.Check(t, strings.Contains(we.Message, w), "%s: %q lacks %q", c.path, we.Message, w)
				}
				assert.Check(t, took < prompt, "%s took %v", c.path, took)
			}
			if st.want.code == chromium.TabCrashed {
				// The advice holds: navigating does not bring the tab back.
				_, we, _ := s.do("POST", "/url", map[string]any{"url": pages.A + "/debuggermemory/foo.html"}, 30*time.Second)
				assert.Check(t, we != nil && we.Code == chromium.TabCrashed, "navigate after a crash: %v", we)
			}
		})
	}
}

// A census that takes long on a healthy page (a big heap) is not cut
// short by the engine's liveness probe: only a page that does not answer
// at all is.
func TestCensusOfBigHeap(t *testing.T) {
	env := chromiumtest.Start(t, debuggermemory.Register)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	s := newRawSession(t, env.URL)
	s.ok(t, "POST", "/url", map[string]any{"url": pages.A + "/debuggermemory/foo.html"})
	s.script(t, `makeFoos(1000000)`)
	raw, we, took := s.do("POST", "/wdext/memory/census", map[string]any{"breakdown": map[string]any{"by": "objectClass"}}, 3*time.Minute)
	assert.Assert(t, we == nil, "%v after %v", we, took)
	var byClass map[string]counts
	assert.NilError(t, json.Unmarshal(raw, &byClass))
	assert.Equal(t, byClass["Foo"].Count, int64(1000000))
	t.Logf("census of 1,000,000 Foos took %v", took)
}

// A census under way when the client deletes the session answers
// "invalid session id" (the session ended), at once.
func TestCensusAbortedByDeleteSession(t *testing.T) {
	env := chromiumtest.Start(t, debuggermemory.Register)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	s := newRawSession(t, env.URL)
	s.ok(t, "POST", "/url", map[string]any{"url": pages.A + "/debuggermemory/foo.html"})
	s.script(t, `makeFoos(1000000)`)
	type reply struct {
		we   *wire.Error
		took time.Duration
	}
	got := make(chan reply, 1)
	go func() {
		_, we, took := s.do("POST", "/wdext/memory/census", map[string]any{}, 3*time.Minute)
		got <- reply{we, took}
	}()
	time.Sleep(time.Second)
	deleted := time.Now()
	_, we, _ := s.do("DELETE", "", nil, 30*time.Second)
	assert.Assert(t, we == nil, "%v", we)
	select {
	case r := <-got:
		assert.Assert(t, r.we != nil, "the census succeeded in %v: make the heap bigger", r.took)
		assert.Equal(t, r.we.Code, wire.InvalidSessionID, "%v", r.we)
		assert.Assert(t, time.Since(deleted) < 10*time.Second)
	case <-time.After(time.Minute):
		t.Fatal("the census did not answer a minute after Delete Session")
	}
}

// When the browser dies (killed: only the one this test started, by its
// PID) the extension commands answer "invalid session id", as the driver
// does, not "unsupported operation".
func TestCommandsAfterBrowserDied(t *testing.T) {
	env := chromiumtest.Start(t, forcesample.Register, memory.Register, debuggermemory.Register)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	for _, path := range []string{"/wdext/memory/census", "/forcesample", "/wdext/memory/measure", "/wdext/memory/live-objects/start"} {
		t.Run(strings.ReplaceAll(path, "/", "_"), func(t *testing.T) {
			s := newRawSession(t, env.URL)
			s.ok(t, "POST", "/url", map[string]any{"url": pages.A + "/debuggermemory/foo.html"})
			s.ok(t, "POST", "/wdext/memory/census", map[string]any{}) // the engine has its connection
			b := s.browser(t)
			res, err := cdproto.Call(context.Background(), b, systeminfo.GetProcessInfo, cdproto.Empty{})
			assert.NilError(t, err)
			killed := false
			for _, p := range res.ProcessInfo {
				if p.Type == "browser" {
					assert.NilError(t, syscall.Kill(int(p.ID), syscall.SIGKILL))
					killed = true
				}
			}
			assert.Assert(t, killed, "no browser process in %+v", res.ProcessInfo)
			<-b.Done()
			_, we, took := s.do("POST", path, map[string]any{}, 30*time.Second)
			assert.Assert(t, we != nil)
			assert.Equal(t, we.Code, wire.InvalidSessionID, "%v", we)
			assert.Assert(t, took < prompt, "took %v", took)
		})
	}
}

// With the session's current window closed (another one still open) the
// commands that act on the current window answer "no such window".
func TestCommandsAfterWindowClosed(t *testing.T) {
	env := chromiumtest.Start(t, memory.Register, debuggermemory.Register)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	s := newRawSession(t, env.URL)
	s.ok(t, "POST", "/url", map[string]any{"url": pages.A + "/debuggermemory/foo.html"})
	s.ok(t, "POST", "/wdext/memory/census", map[string]any{})
	s.script(t, `window.open("about:blank", "second")`)
	s.ok(t, "DELETE", "/window", nil)
	for _, path := range []string{"/wdext/memory/census", "/wdext/memory/measure", "/wdext/memory/allocations", "/wdext/memory/live-objects/start"} {
		body := map[string]any{}
		if path == "/wdext/memory/allocations" {
			body["trackingAllocationSites"] = true
		}
		_, we, took := s.do("POST", path, body, 30*time.Second)
		assert.Assert(t, we != nil, path)
		assert.Equal(t, we.Code, wire.NoSuchWindow, "%s: %v", path, we)
		assert.Assert(t, took < prompt, "%s took %v", path, took)
	}
}
