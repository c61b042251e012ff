package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/internal/procgroup"
)

// Faults of the processes around wdext (issue 12): a browser wdext caused
// to exist is owned by a session or killed, whoever vanishes.

// browsers counts this run's Chromium processes (not wdext, not its
// chromedriver).
func (s *served) browsers() int { return len(s.started()) - s.count("chromedriver") }

// started lists what this run's wdext started, directly or not.
func (s *served) started() map[int]string {
	procs := e2e.MarkedProcesses(s.mark)
	delete(procs, s.cmd.Process.Pid)
	return procs
}

func (s *served) count(comm string) int {
	n := 0
	for _, c := range s.started() {
		if c == comm {
			n++
		}
	}
	return n
}

// pidOf returns the pid of this run's process named comm.
func (s *served) pidOf(t *testing.T, comm string) int {
	t.Helper()
	for pid, c := range e2e.MarkedProcesses(s.mark) {
		if c == comm {
			return pid
		}
	}
	t.Fatalf("no %s among %v", comm, e2e.MarkedProcesses(s.mark))
	return 0
}

// within polls ok for up to d.
func within(d time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// shortTempDir is a TMPDIR for wdext, shorter than t.TempDir: Chromium's
// sockets live beneath it, and a socket's path has at most 107 bytes.
func shortTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "wdf")
	assert.NilError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// wdextDirs lists the TMPDIRs of wdext's process groups left in dir.
func wdextDirs(t *testing.T, dir string) []string {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(dir, "wdext-*"))
	assert.NilError(t, err)
	return left
}

// A client that gives up on New Session does not leave its browser
// behind: the driver creates it anyway, and wdext deletes it.
func TestAbortedNewSessionLeavesNoBrowser(t *testing.T) {
	chromiumtest.Require(t)
	s := startServe(t)
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/session",
			strings.NewReader(`{"capabilities":{"alwaysMatch":{"browserName":"chrome"}}}`))
		req.Header.Set("Content-Type", "application/json")
		_, err := http.DefaultClient.Do(req)
		cancel()
		assert.Assert(t, err != nil, "the new session answered within 200 ms: the test needs a slower start")
	}
	// Each aborted session is created upstream within seconds, then
	// deleted.
	assert.Assert(t, within(30*time.Second, func() bool {
		return strings.Count(s.log(), "client left before its new session was created") == 3 && s.browsers() == 0
	}), "browsers left: %v\n%s", s.started(), s.log())
	s.newSession(t) // and wdext still works
}

// A chromedriver killed by SIGKILL takes its browsers along at once, and
// the next session gets a new driver.
func TestKilledChromedriverTakesItsBrowsers(t *testing.T) {
	chromiumtest.Require(t)
	tmp := shortTempDir(t)
	s := startServeEnv(t, []string{"TMPDIR=" + tmp})
	id := s.newSession(t)
	old := s.pidOf(t, "chromedriver")
	assert.Assert(t, s.browsers() > 0)
	assert.NilError(t, syscall.Kill(old, syscall.SIGKILL))
	assert.Assert(t, within(10*time.Second, func() bool { return len(s.started()) == 0 }),
		"left after chromedriver died: %v", s.started())
	// Every session on it is lost: an error, naming them (issue 28).
	assert.Assert(t, within(10*time.Second, func() bool {
		return strings.Contains(s.log(), `level=ERROR msg="driver process exited: its sessions are lost"`) &&
			strings.Contains(s.log(), "sessions=["+id+"]")
	}), "%s", s.log())
	assert.Assert(t, within(5*time.Second, func() bool { return len(wdextDirs(t, tmp)) == 0 }), "%v", wdextDirs(t, tmp))

	resp, err := http.Get(s.url + "/session/" + id + "/title")
	assert.NilError(t, err)
	resp.Body.Close()
	assert.Equal(t, resp.StatusCode, http.StatusNotFound) // invalid session id
	s.newSession(t)
	assert.Assert(t, s.pidOf(t, "chromedriver") != old)
}

// A wdext killed outright leaves nothing of its drivers: no browser, no
// driver, no profile directory, without a next wdext (issue 28: 2
// sessions left 18 processes and 1.8 GB until another wdext started). The
// issue's bound is 5 s; the test waits for the end, not for a time, and
// reports how long it took.
func TestKilledWdextLeavesNothing(t *testing.T) {
	chromiumtest.Require(t)
	tmp := shortTempDir(t)
	s := startServeEnv(t, []string{"TMPDIR=" + tmp})
	s.newSession(t)
	s.newSession(t)
	assert.Assert(t, s.browsers() > 0)
	assert.Assert(t, len(wdextDirs(t, tmp)) > 0)
	killed := time.Now()
	assert.NilError(t, s.cmd.Process.Kill())
	<-s.exited
	gone := within(60*time.Second, func() bool { return len(s.started()) == 0 && len(wdextDirs(t, tmp)) == 0 })
	t.Logf("all gone %v after SIGKILL (%s)", time.Since(killed).Round(time.Millisecond), containment(s.log()))
	assert.Assert(t, gone, "left after wdext was killed: %v, %v", s.started(), wdextDirs(t, tmp))
	profiles, _, _ := profileDirs(tmp)
	assert.DeepEqual(t, profiles, []string(nil))
	assert.Assert(t, strings.Contains(s.log(), `msg="driver processes contained by"`), "%s", s.log())
}

// containment is the mechanism a wdext's log says is in force.
func containment(log string) string {
	_, rest, ok := strings.Cut(log, `msg="driver processes contained by" mechanism=`)
	if !ok {
		return "mechanism not logged"
	}
	line, _, _ := strings.Cut(rest, "\n")
	return line
}

// Where no namespace holds a wdext's drivers, and the wdext is killed
// together with their supervisors (as by a cgroup's end, or the OOM
// killer), the next wdext ends the browsers and profiles it left.
func TestKilledWdextIsSweptByTheNext(t *testing.T) {
	chromiumtest.Require(t)
	tmp := shortTempDir(t)
	env := []string{"TMPDIR=" + tmp, procgroup.NamespaceEnv + "=off"}
	first := startServeEnv(t, env)
	first.newSession(t)
	first.newSession(t)
	driverPid := first.pidOf(t, "chromedriver")
	// All at once: stopped first, neither wdext nor a supervisor sees the
	// other die and cleans up.
	assert.NilError(t, first.cmd.Process.Signal(syscall.SIGSTOP))
	supervisors := children(first.cmd.Process.Pid)
	assert.Assert(t, len(supervisors) > 0)
	for _, pid := range supervisors {
		syscall.Kill(pid, syscall.SIGSTOP)
	}
	for _, pid := range supervisors {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	assert.NilError(t, first.cmd.Process.Kill())
	<-first.exited
	assert.Assert(t, within(5*time.Second, func() bool {
		_, alive := e2e.MarkedProcesses(first.mark)[driverPid]
		return !alive
	}), "chromedriver outlived the supervisor that started it")
	assert.Assert(t, len(wdextDirs(t, tmp)) > 0, "the test needs a killed run's directory")
	assert.Assert(t, first.browsers() > 0, "the test needs a killed run's browsers")

	second := startServeEnv(t, env)
	assert.Assert(t, strings.Contains(second.log(), "ended what a killed wdext left"), "%s", second.log())
	assert.Equal(t, len(e2e.MarkedProcesses(first.mark)), 0, "left: %v", e2e.MarkedProcesses(first.mark))
	// The second run's own driver has a directory; the first's are gone.
	firstDirs, err := filepath.Glob(filepath.Join(tmp, fmt.Sprintf("wdext-%d.*", first.cmd.Process.Pid)))
	assert.NilError(t, err)
	assert.Equal(t, len(firstDirs), 0, "%v\n%s", firstDirs, second.log())
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	var out []int
	for _, p := range procgroup.Scan() {
		if p.PPid == pid && !p.Exited() {
			out = append(out, p.Pid)
		}
	}
	return out
}

// Sessions created and deleted one after another leave no zombie behind:
// the processes a browser leaves when it ends are reaped as they exit
// (issue 28: 84 sessions left 860 zombies, about ten per session). A
// process that has just exited is a zombie until its reaper runs: after
// each deletion the test waits until at most one is left.
func TestSessionsLeaveNoZombies(t *testing.T) {
	chromiumtest.Require(t)
	const n = 20 // issue 28 saw ten zombies a session
	s := startServe(t)
	wdext := s.cmd.Process.Pid
	most, seen := 0, 0
	for i := range n {
		id := s.newSession(t)
		status, body := s.delete(t, "/session/"+id)
		assert.Equal(t, status, 200, body)
		seen = max(seen, len(e2e.Zombies(wdext)))
		var left []int
		z := settle(true, func() bool { left = e2e.Zombies(wdext); return len(left) <= 1 })
		most = max(most, len(left))
		assert.Assert(t, z, "after session %d of %d, %d zombies below wdext: %v", i+1, n, len(left), left)
	}
	t.Logf("%d sessions: at most %d zombies held (at most %d seen at once right after a deletion)", n, most, seen)
}

// delete sends DELETE and returns the status and body.
func (s *served) delete(t *testing.T, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodDelete, s.url+path, nil)
	assert.NilError(t, err)
	resp, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// On SIGTERM wdext is gone only once its browsers are, and leaves no
// profile directory behind.
func TestSIGTERMLeavesNoBrowserAndNoProfile(t *testing.T) {
	chromiumtest.Require(t)
	tmp := shortTempDir(t)
	s := startServeEnv(t, []string{"TMPDIR=" + tmp})
	for range 3 {
		s.newSession(t)
	}
	s.signalAndWait(t, syscall.SIGTERM)
	assert.Equal(t, len(e2e.MarkedProcesses(s.mark)), 0, "alive after wdext exited: %v", e2e.MarkedProcesses(s.mark))
	entries, err := os.ReadDir(tmp)
	assert.NilError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.DeepEqual(t, names, []string(nil))
}

// post sends a command and returns its status and body.
func (s *served) post(t *testing.T, path, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(s.url+path, "application/json", strings.NewReader(body))
	assert.NilError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// --session-timeout counts idle time only: a command that runs longer
// than the timeout keeps its session, and an expired session says why it
// is gone.
func TestSessionTimeoutSparesBusySessions(t *testing.T) {
	chromiumtest.Require(t)
	s := startServe(t, "--session-timeout", "1s")
	id := s.newSession(t)
	status, body := s.post(t, "/session/"+id+"/execute/async",
		`{"script":"setTimeout(arguments[0], 3000, 'slept')","args":[]}`)
	assert.Equal(t, status, 200, body)
	status, body = s.post(t, "/session/"+id+"/execute/sync", `{"script":"return 1","args":[]}`)
	assert.Equal(t, status, 200, "the session expired while its command ran: %s", body)

	assert.Assert(t, within(10*time.Second, func() bool {
		return strings.Contains(s.log(), `msg="session idle, deleting" session=`+id)
	}), "%s", s.log())
	status, body = s.post(t, "/session/"+id+"/execute/sync", `{"script":"return 1","args":[]}`)
	assert.Equal(t, status, 404, body)
	assert.Assert(t, strings.Contains(body, "invalid session id") && strings.Contains(body, "idle for longer than the session timeout (1s)"), body)
}
