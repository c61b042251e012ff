package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/internal/e2e"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// wdextBinary builds this command once per test run.
func wdextBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "wdext-bin-")
		if buildErr != nil {
			return
		}
		binPath = binDir + "/wdext"
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	assert.NilError(t, buildErr)
	return binPath
}

// served is a running `wdext serve`.
type served struct {
	cmd    *exec.Cmd
	url    string
	mark   string // WDEXT_TEST_MARK=… in the environment of all it starts
	mu     sync.Mutex
	stderr bytes.Buffer
	exited chan error
}

func (s *served) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

var urlInLog = regexp.MustCompile(`msg="wdext serving" url=(http://\S+)`)

// startServe runs `wdext serve --port 0 args…` and learns its address from
// the log line that announces it.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	return startServeEnv(t, nil, args...)
}

// startServeEnv is startServe with env added to wdext's environment.
func startServeEnv(t *testing.T, env []string, args ...string) *served {
	t.Helper()
	s := &served{
		mark:   fmt.Sprintf("WDEXT_TEST_MARK=%s-%d-%d", strings.ReplaceAll(t.Name(), "/", "_"), os.Getpid(), time.Now().UnixNano()),
		exited: make(chan error, 1),
	}
	s.cmd = exec.Command(wdextBinary(t), append([]string{"serve", "--port", "0", "--log-level", "debug"}, args...)...)
	s.cmd.Env = append(append(os.Environ(), env...), s.mark)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := s.cmd.StderrPipe()
	assert.NilError(t, err)
	assert.NilError(t, s.cmd.Start())
	// Safety net: whatever the test does, nothing it started survives.
	t.Cleanup(func() {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		for pid := range e2e.MarkedProcesses(s.mark) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		if t.Failed() {
			t.Logf("wdext log:\n%s", s.log())
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.stderr.WriteString(line + "\n")
			s.mu.Unlock()
			if m := urlInLog.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, pipe)
		s.exited <- s.cmd.Wait()
	}()
	select {
	case s.url = <-found:
	case err := <-s.exited:
		t.Fatalf("wdext exited before serving: %v\n%s", err, s.log())
	case <-time.After(60 * time.Second):
		t.Fatalf("wdext did not announce its address:\n%s", s.log())
	}
	return s
}

func (s *served) newSession(t *testing.T) string {
	t.Helper()
	resp, err := http.Post(s.url+"/session", "application/json",
		strings.NewReader(`{"capabilities":{"alwaysMatch":{"browserName":"chrome"}}}`))
	assert.NilError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, resp.StatusCode, 200, "%s", body)
	var v struct {
		Value struct {
			SessionID string `json:"sessionId"`
		} `json:"value"`
	}
	assert.NilError(t, json.Unmarshal(body, &v))
	return v.Value.SessionID
}

// signalAndWait sends sig and waits for a clean exit.
func (s *served) signalAndWait(t *testing.T, sig syscall.Signal) {
	t.Helper()
	assert.NilError(t, s.cmd.Process.Signal(sig))
	select {
	case err := <-s.exited:
		assert.NilError(t, err, "wdext exit after %v", sig)
	case <-time.After(60 * time.Second):
		t.Fatalf("wdext did not exit after %v:\n%s", sig, s.log())
	}
}

// settle polls f for up to ~5 s until it returns want (process reaping
// takes a moment) and returns its last answer.
func settle[T comparable](want T, f func() T) T {
	got := f()
	for i := 0; i < 100 && got != want; i++ {
		time.Sleep(50 * time.Millisecond)
		got = f()
	}
	return got
}

// SIGTERM and SIGINT: wdext deletes the live sessions, stops the driver
// and exits, leaving no chromium or chromedriver behind.
func TestServeSignalShutdown(t *testing.T) {
	chromiumtest.Require(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			before := chromiumtest.Processes()
			s := startServe(t)
			for i := 0; i < 2; i++ {
				s.newSession(t)
			}
			mine := e2e.MarkedProcesses(s.mark)
			comms := map[string]int{}
			for _, c := range mine {
				comms[c]++
			}
			assert.Equal(t, comms["chromedriver"], 1, "%v", mine)
			assert.Assert(t, comms["chromium"] >= 2, "%v", mine)
			t.Logf("processes of this wdext: %v", comms)

			s.signalAndWait(t, sig)
			assert.Assert(t, strings.Contains(s.log(), `msg="shutting down" sessions=2`), "%s", s.log())
			assert.Assert(t, !strings.Contains(s.log(), "level=WARN") && !strings.Contains(s.log(), "level=ERROR"), "%s", s.log())

			left := settle(0, func() int { return len(e2e.MarkedProcesses(s.mark)) })
			assert.Equal(t, left, 0, "left behind: %v", e2e.MarkedProcesses(s.mark))
			// The machine-wide count: equal unless other tests start or
			// stop browsers meanwhile (this wdext's own are all gone, as
			// checked above), so a difference is only reported.
			if after := settle(before, chromiumtest.Processes); after != before {
				t.Logf("chromium/chromedriver processes on the machine: %d before, %d after (none of them this test's)", before, after)
			}
		})
	}
}

// With --upstream, wdext does not own the driver: on SIGTERM it deletes
// its sessions there and leaves the driver running.
func TestServeSignalDeletesUpstreamSessions(t *testing.T) {
	path := chromiumtest.Require(t)
	d := &chromium.Driver{Path: path}
	t.Cleanup(func() { d.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in, err := d.Current(ctx)
	assert.NilError(t, err)

	s := startServe(t, "--upstream", in.URL.String())
	// A remote upstream gets no defaults: ask for them here.
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{"browserName": "chrome"}}}
	chromium.ManagedDefaults().Apply(caps)
	body, _ := json.Marshal(caps)
	var ids []string
	for i := 0; i < 2; i++ {
		resp, err := http.Post(s.url+"/session", "application/json", bytes.NewReader(body))
		assert.NilError(t, err)
		var v struct {
			Value struct {
				SessionID string `json:"sessionId"`
			} `json:"value"`
		}
		assert.NilError(t, json.NewDecoder(resp.Body).Decode(&v))
		resp.Body.Close()
		ids = append(ids, v.Value.SessionID)
	}

	s.signalAndWait(t, syscall.SIGTERM)
	assert.Assert(t, in.Alive(), "wdext stopped a driver it does not own")
	for _, id := range ids {
		resp, err := http.Get(in.URL.String() + "/session/" + id + "/title")
		assert.NilError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, resp.StatusCode, 404, "session %s still alive in the driver: %s", id, body)
		assert.Assert(t, strings.Contains(string(body), "invalid session id"), "%s", body)
	}
}
