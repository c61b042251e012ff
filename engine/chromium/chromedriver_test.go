package chromium_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wdext/wdext/engine/chromium"
	"gotest.tools/v3/assert"
)

// TestMain doubles as a fake chromedriver: run with WDEXT_FAKE_DRIVER set,
// the test binary serves /status on --port=N, after WDEXT_FAKE_DELAY, and
// says ready unless WDEXT_FAKE_NOT_READY is set; WDEXT_FAKE_EXIT makes it
// exit at once with status 3.
func TestMain(m *testing.M) {
	if os.Getenv("WDEXT_FAKE_DRIVER") != "" {
		fakeDriver()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func fakeDriver() {
	if os.Getenv("WDEXT_FAKE_EXIT") != "" {
		os.Exit(3)
	}
	if d, err := time.ParseDuration(os.Getenv("WDEXT_FAKE_DELAY")); err == nil {
		time.Sleep(d)
	}
	port := ""
	for _, a := range os.Args[1:] {
		if p, ok := strings.CutPrefix(a, "--port="); ok {
			port = p
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		os.Exit(4)
	}
	ready := os.Getenv("WDEXT_FAKE_NOT_READY") == ""
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		fmt.Fprintf(w, `{"value":{"ready":%v,"message":"fake"}}`, ready)
	}))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
}

// fake returns a Chromedriver whose Path is this test binary acting as a
// fake driver with the given environment; its processes carry a marker
// unique to the test (see fakeProcesses).
func fake(t *testing.T, env ...string) *chromium.Driver {
	t.Helper()
	self, err := os.Executable()
	assert.NilError(t, err)
	script := filepath.Join(t.TempDir(), "fake-chromedriver")
	body := "#!/bin/sh\nexec env WDEXT_FAKE_DRIVER=1 WDEXT_FAKE_MARK=" + marker(t) + " " + strings.Join(env, " ") + " " + self + ` "$@"` + "\n"
	assert.NilError(t, os.WriteFile(script, []byte(body), 0o755))
	d := &chromium.Driver{Path: script, StartTimeout: 20 * time.Second}
	t.Cleanup(func() {
		d.Close()
		assertNoFakes(t)
	})
	return d
}

func marker(t *testing.T) string {
	return fmt.Sprintf("%s-%d", strings.ReplaceAll(t.Name(), "/", "_"), os.Getpid())
}

// fakeProcesses counts live processes carrying the test's marker.
func fakeProcesses(t *testing.T) int {
	want := []byte("WDEXT_FAKE_MARK=" + marker(t) + "\x00")
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !strings.Contains(string(env), string(want)) {
			continue
		}
		if stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); isZombie(stat) {
			continue
		}
		n++
	}
	return n
}

func isZombie(stat []byte) bool {
	// "pid (comm) state …": comm may hold spaces and parentheses.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

func assertNoFakes(t *testing.T) {
	t.Helper()
	for i := 0; i < 250 && fakeProcesses(t) > 0; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	assert.Equal(t, fakeProcesses(t), 0, "fake driver processes left behind")
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestFindChromedriver(t *testing.T) {
	p, err := chromium.FindDriver("/some/where/chromedriver")
	assert.NilError(t, err)
	assert.Equal(t, p, "/some/where/chromedriver")
	t.Setenv("PATH", t.TempDir())
	p, err = chromium.FindDriver("")
	if _, statErr := os.Stat("/usr/bin/chromedriver"); statErr == nil {
		assert.NilError(t, err)
		assert.Equal(t, p, "/usr/bin/chromedriver")
	} else {
		assert.ErrorContains(t, err, "chromedriver not found")
	}
}

// Start on a free loopback port, ready through /status; a dead driver is
// replaced by the next Current.
func TestChromedriverStartKillRestart(t *testing.T) {
	d := fake(t)
	assert.Assert(t, d.Managed())
	// Never started: ready, since the next new session starts it.
	assert.Assert(t, d.Ready(ctx(t)))

	in, err := d.Current(ctx(t))
	assert.NilError(t, err)
	assert.Equal(t, in.URL.Hostname(), "127.0.0.1")
	assert.Assert(t, in.Alive())
	assert.Assert(t, d.Ready(ctx(t)))
	assert.Equal(t, fakeProcesses(t), 1)
	again, err := d.Current(ctx(t))
	assert.NilError(t, err)
	assert.Equal(t, again.URL.String(), in.URL.String(), "a live driver is reused")

	d.Kill()
	select {
	case <-in.Done:
	default:
		t.Fatal("Kill returned before the driver exited")
	}
	assert.Assert(t, !in.Alive())
	assertNoFakes(t)
	assert.Assert(t, d.Ready(ctx(t)), "a dead driver is restarted on demand")

	next, err := d.Current(ctx(t))
	assert.NilError(t, err)
	assert.Assert(t, next.Alive())
	assert.Assert(t, next.Done != in.Done)
	assert.Equal(t, fakeProcesses(t), 1)

	assert.NilError(t, d.Close())
	assert.Assert(t, !next.Alive())
	assert.Assert(t, !d.Ready(ctx(t)))
	_, err = d.Current(ctx(t))
	assert.ErrorContains(t, err, "shutting down")
	assertNoFakes(t)
}

// While a driver starts, Ready says false at once (it does not wait for
// the start), and true when the start is done.
func TestChromedriverNotReadyWhileStarting(t *testing.T) {
	d := fake(t, "WDEXT_FAKE_DELAY=1s")
	started := make(chan error, 1)
	go func() {
		_, err := d.Current(context.Background())
		started <- err
	}()
	sawNotReady := false
	for !sawNotReady {
		select {
		case err := <-started:
			t.Fatalf("the start ended (%v) before Ready said false", err)
		default:
		}
		// A Ready that waited for the start would only ever say true.
		sawNotReady = !d.Ready(ctx(t))
		time.Sleep(5 * time.Millisecond)
	}
	assert.NilError(t, <-started)
	assert.Assert(t, d.Ready(ctx(t)))
}

// A driver that says not ready is not ready, and a start that never gets
// ready gives up after StartTimeout and leaves no process.
func TestChromedriverNeverReady(t *testing.T) {
	d := fake(t, "WDEXT_FAKE_NOT_READY=1")
	d.StartTimeout = 500 * time.Millisecond
	_, err := d.Current(ctx(t))
	assert.ErrorContains(t, err, "not ready after")
	assert.Assert(t, !d.Ready(ctx(t)), "the last start failed")
	assertNoFakes(t)
}

func TestChromedriverExitsAtStart(t *testing.T) {
	d := fake(t, "WDEXT_FAKE_EXIT=1")
	_, err := d.Current(ctx(t))
	assert.ErrorContains(t, err, "exited before it was ready")
	assert.Assert(t, !d.Ready(ctx(t)))

	missing := &chromium.Driver{Path: filepath.Join(t.TempDir(), "no-such-driver")}
	_, err = missing.Current(ctx(t))
	assert.ErrorContains(t, err, "no-such-driver")
	assert.Assert(t, !missing.Ready(ctx(t)))
}

// Close during a start waits for it and stops the process it started.
func TestChromedriverCloseDuringStart(t *testing.T) {
	d := fake(t, "WDEXT_FAKE_DELAY=1s")
	started := make(chan error, 1)
	go func() {
		_, err := d.Current(context.Background())
		started <- err
	}()
	for d.Ready(ctx(t)) {
		select {
		case err := <-started:
			t.Fatalf("the start ended (%v) before Ready said false", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	assert.NilError(t, d.Close())
	<-started
	assertNoFakes(t)
	_, err := d.Current(ctx(t))
	assert.ErrorContains(t, err, "shutting down")
}
