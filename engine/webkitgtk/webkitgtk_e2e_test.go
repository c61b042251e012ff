package webkitgtk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/webkitgtk"
	"github.com/wdext/wdext/engine/webkitgtk/webkitgtktest"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

// mark puts a marker in the environment of every process the test
// starts, for e2e.MarkedProcesses.
func mark(t *testing.T) string {
	m := fmt.Sprintf("%s-%d", t.Name(), os.Getpid())
	t.Setenv("WDEXT_TEST_MARK", m)
	return "WDEXT_TEST_MARK=" + m
}

// waitGone waits (reaping takes a moment) for the marked processes to be
// gone, and fails the test with what is left.
func waitGone(t *testing.T, m string) {
	t.Helper()
	e2e.WaitGone(t, m)
	zombies := settledZombies()
	assert.Equal(t, len(zombies), 0, "zombies left: %v", zombies)
}

// settledZombies is zombieChildren once none is left, or after 5 s: a
// process that has just exited (a supervisor) is a zombie until its
// waiter reaps it.
func settledZombies() []int {
	z := zombieChildren()
	for i := 0; i < 250 && len(z) > 0; i++ {
		time.Sleep(20 * time.Millisecond)
		z = zombieChildren()
	}
	return z
}

// zombieChildren lists this process's zombie children.
func zombieChildren() []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid …": comm may hold spaces.
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[0] == "Z" && f[1] == strconv.Itoa(os.Getpid()) {
			out = append(out, pid)
		}
	}
	return out
}

type result struct {
	Status int
	Value  json.RawMessage
	Err    *wire.Error
}

func do(t testing.TB, method, url string, body any) result {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, url, rd)
	assert.NilError(t, err)
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	assert.NilError(t, err)
	defer resp.Body.Close()
	var v struct {
		Value json.RawMessage `json:"value"`
	}
	assert.NilError(t, json.NewDecoder(resp.Body).Decode(&v))
	r := result{Status: resp.StatusCode, Value: v.Value}
	if e, ok := wire.ParseError(append(append([]byte(`{"value":`), v.Value...), '}')); ok {
		r.Err = e
	}
	return r
}

func newSession(t testing.TB, base string, always map[string]any) (string, result) {
	t.Helper()
	r := do(t, "POST", base+"/session", map[string]any{"capabilities": map[string]any{"alwaysMatch": always}})
	var v struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(r.Value, &v)
	return v.SessionID, r
}

// Sessions run concurrently, each in a driver (and MiniBrowser) of its
// own; deleting a session stops its driver and browser, and closing the
// upstream leaves no process (and no zombie) behind.
func TestConcurrentSessionsNoOrphans(t *testing.T) {
	m := mark(t)
	env := webkitgtktest.Start(t)
	const n = 3
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { // owned by the test, which waits
			defer wg.Done()
			id, r := newSession(t, env.URL, map[string]any{})
			if r.Status != 200 {
				t.Errorf("new session %d: %d %s", i, r.Status, r.Value)
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	assert.Equal(t, env.Upstream.Sessions(), n)
	sess, ok := env.Server.Sessions().Get(ids[0])
	assert.Assert(t, ok)
	assert.Equal(t, sess.BrowserName, webkitgtk.BrowserName)
	for i, id := range ids {
		r := do(t, "POST", env.URL+"/session/"+id+"/execute/sync", map[string]any{"script": "return arguments[0]", "args": []any{i}})
		assert.Equal(t, string(r.Value), fmt.Sprint(i))
	}
	browsers := 0
	for _, comm := range e2e.MarkedProcesses(m) {
		if comm == "MiniBrowser" {
			browsers++
		}
	}
	assert.Equal(t, browsers, n)

	r := do(t, "DELETE", env.URL+"/session/"+ids[0], nil)
	assert.Equal(t, r.Status, 200)
	// The reply comes before the driver is stopped: wait for its exit.
	select {
	case <-sess.Gone:
	case <-time.After(30 * time.Second):
		t.Fatal("driver of the deleted session still running after 30 s")
	}
	assert.Equal(t, env.Upstream.Sessions(), n-1)
	r = do(t, "GET", env.URL+"/session/"+ids[0]+"/title", nil)
	assert.Equal(t, r.Err.Code, wire.InvalidSessionID)
	r = do(t, "GET", env.URL+"/session/"+ids[1]+"/title", nil)
	assert.Equal(t, r.Status, 200)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	env.Server.Shutdown(ctx)
	assert.NilError(t, env.Upstream.Close())
	waitGone(t, m)
}

// A browser that exits at once, one that never opens its inspector
// server, and one WebKitWebDriver hangs on in POST /session all end in
// "session not created" with the reason, after wdext's own timeouts, and
// leave no process behind.
func TestNewSessionFailures(t *testing.T) {
	path := webkitgtktest.Require(t)
	m := mark(t)
	// Short for the failures, long enough for the real session at the
	// end on a loaded machine (MiniBrowser took over 2 s to open its
	// inspector in a CI run).
	up := &webkitgtk.Upstream{Driver: path, StartTimeout: 8 * time.Second, NewSessionTimeout: 8 * time.Second}
	srv := webdriver.NewServer(webdriver.Config{Upstream: up, Sessions: session.NewRegistry()})
	hs := newServer(t, srv)
	t.Cleanup(func() { up.Close() })

	browser := func(binary string) map[string]any {
		return map[string]any{"webkitgtk:browserOptions": map[string]any{"binary": binary}}
	}
	for _, c := range []struct {
		name, fake string
		caps       map[string]any
		want       string
	}{
		{"exits", "", browser("/bin/false"), "false exited before its inspector server listened"},
		{"silent", "silent", browser(os.Args[0]), "did not open its inspector within 8s"},
		{"hangs", "mute", browser(os.Args[0]), "did not create a session within 8s (the browser probably failed to start)"},
		{"bad args", "", map[string]any{"webkitgtk:browserOptions": map[string]any{"args": "--x"}}, "webkitgtk:browserOptions.args must be an array of strings"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(fakeBrowserEnv, c.fake)
			_, r := newSession(t, hs, c.caps)
			assert.Assert(t, r.Err != nil, "%s", r.Value)
			if c.name == "bad args" {
				assert.Equal(t, r.Status, 400, "%s", r.Value)
				assert.Equal(t, r.Err.Code, wire.InvalidArgument)
			} else {
				assert.Equal(t, r.Status, 500, "%s", r.Value)
				assert.Equal(t, r.Err.Code, wire.SessionNotCreated)
			}
			assert.ErrorContains(t, r.Err, c.want)
			assert.Equal(t, up.Sessions(), 0)
		})
	}

	// The display is still there for the next session.
	id, r := newSession(t, hs, map[string]any{})
	assert.Equal(t, r.Status, 200, "%s", r.Value)
	do(t, "DELETE", hs+"/session/"+id, nil)
	up.Close()
	waitGone(t, m)
}

func newServer(t *testing.T, h http.Handler) string {
	s := httptestServer(h)
	t.Cleanup(s.Close)
	return s.URL
}

// A driver that dies by itself takes its MiniBrowser with it, and a
// browser its driver; either way the session answers "invalid session id"
// and no process or zombie is left.
func TestDriverDeathTakesBrowser(t *testing.T) {
	for _, victim := range []string{"WebKitWebDriver", "MiniBrowser"} {
		t.Run(victim, func(t *testing.T) {
			m := mark(t)
			env := webkitgtktest.Start(t)
			id, r := newSession(t, env.URL, map[string]any{})
			assert.Equal(t, r.Status, 200, "%s", r.Value)
			killed := 0
			for pid, comm := range e2e.MarkedProcesses(m) {
				if comm == victim {
					killed++
					assert.NilError(t, syscall.Kill(pid, syscall.SIGKILL))
				}
			}
			assert.Equal(t, killed, 1)
			sess, ok := env.Server.Sessions().Get(id)
			assert.Assert(t, ok)
			select {
			case <-sess.Gone:
			case <-time.After(30 * time.Second):
				t.Fatal("driver still running")
			}
			left := func() int {
				n := 0
				for _, comm := range e2e.MarkedProcesses(m) {
					if comm == "MiniBrowser" || strings.HasPrefix(comm, "WebKit") {
						n++
					}
				}
				return n
			}
			// Reaping takes a moment: wait for the processes.
			for i := 0; i < 250 && left() > 0; i++ {
				time.Sleep(20 * time.Millisecond)
			}
			assert.Equal(t, left(), 0, "left: %v", e2e.MarkedProcesses(m))
			r = do(t, "GET", env.URL+"/session/"+id+"/title", nil)
			assert.Equal(t, r.Err.Code, wire.InvalidSessionID)
			assert.Equal(t, env.Upstream.Sessions(), 0)
			zombies := settledZombies()
			assert.Equal(t, len(zombies), 0, "zombies: %v", zombies)
		})
	}
}
