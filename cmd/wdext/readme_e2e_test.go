package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/internal/e2e"
)

// The documentation's marked examples (docBlocks), run as a reader would,
// against a real `wdext serve`: README.md's first, then each docs/*.md
// file's. The shell blocks of a file run in one shell of its own, in
// order (a variable one block defines is there for the next, and for no
// other file); the Python blocks with Debian's python3, the JavaScript
// ones with node. The README's page server, which its first block starts,
// serves every file's examples. Only the ports change: wdext's and the
// page server's are free ones rather than 4444 and 8000. Each block must
// succeed and print what its "# =>" lines say; afterwards wdext must hold
// no session (the examples end theirs) and nothing the examples started
// may be left.
func TestDocsExamples(t *testing.T) {
	chromiumtest.Require(t)
	e2e.RequireTool(t, "bash")
	e2e.RequireTool(t, "curl")
	e2e.RequireTool(t, "jq")
	e2e.RequireTool(t, "python3")
	e2e.RequireTool(t, "/usr/bin/python3 with selenium", "/usr/bin/python3", "-c", "import selenium")
	nodeModules := e2e.RequireNodeClients(t)
	blocks := docBlocks(t)
	assert.Assert(t, len(blocks) > 0, "no <!-- README test --> block in README.md or docs/*.md")
	root, err := filepath.Abs("../..")
	assert.NilError(t, err)

	s := startServe(t)
	wdPort := strings.TrimPrefix(s.url, "http://127.0.0.1:")
	pagePort, err := driver.FreePort()
	assert.NilError(t, err)
	pp := strconv.Itoa(pagePort)
	ports := strings.NewReplacer(
		"localhost:4444", "localhost:"+wdPort, "127.0.0.1:4444", "127.0.0.1:"+wdPort,
		"localhost:8000", "localhost:"+pp, "127.0.0.1:8000", "127.0.0.1:"+pp, "port: 4444", "port: "+wdPort,
		"testdata/readme/serve.py &", "testdata/readme/serve.py "+pp+" &",
	)
	for i := range blocks {
		b := &blocks[i]
		b.code = ports.Replace(b.code)
		for j := range b.want {
			b.want[j] = ports.Replace(b.want[j])
		}
		assert.Assert(t, !regexp.MustCompile(`\b(4444|8000)\b`).MatchString(b.code),
			"%s: a port the test does not replace:\n%s", b.where(), b.code)
	}

	shells := map[string]*shell{} // by file; all stopped at the end, the README's (its page server) last
	var order []*shell
	dir := t.TempDir()
	for i, b := range blocks {
		file := filepath.Join(dir, fmt.Sprintf("block%d.%s", i, b.lang))
		if b.lang == "js" {
			// An ES module next to the node_modules where scripts/deps.sh
			// installed the clients and clients/js (as a project would
			// have them): its imports find them there.
			file = filepath.Join(filepath.Dir(nodeModules), fmt.Sprintf("readme-block%d-%d.mjs", i, os.Getpid()))
			t.Cleanup(func() { os.Remove(file) })
		}
		assert.NilError(t, os.WriteFile(file, []byte(b.code), 0o644))
		var out, stderr string
		var err error
		switch b.lang {
		case "sh":
			sh := shells[b.file]
			if sh == nil {
				sh = startShell(t, root)
				shells[b.file] = sh
				order = append(order, sh)
			}
			out, stderr, err = sh.source(file, 3*time.Minute)
		case "python":
			out, stderr, err = runScript(root, "/usr/bin/python3", file, 3*time.Minute)
		case "js":
			out, stderr, err = runScript(root, "node", file, 3*time.Minute)
		}
		if err != nil {
			t.Fatalf("%s (%s block) failed: %v\n--- block:\n%s--- stdout:\n%s\n--- stderr:\n%s", b.where(), b.lang, err, b.code, out, stderr)
		}
		if !b.matches(out) {
			t.Fatalf("%s (%s block) printed\n%s\nnot what its # => lines say:\n%s\n--- stderr:\n%s", b.where(), b.lang, out, strings.Join(b.want, "\n"), stderr)
		}
		t.Logf("%s: %s block ok", b.where(), b.lang)
	}

	for i := len(order) - 1; i >= 0; i-- {
		order[i].stop(t)
	}
	s.signalAndWait(t, syscall.SIGTERM)
	assert.Assert(t, strings.Contains(s.log(), `msg="shutting down" sessions=0`),
		"the documentation's examples left sessions open:\n%s", s.log())
	left := settle(0, func() int { return len(e2e.MarkedProcesses(s.mark)) })
	assert.Equal(t, left, 0, "left behind: %v", e2e.MarkedProcesses(s.mark))
}

// shell is a bash that runs a file's shell blocks one after another,
// as one interactive session would: with `set -euo pipefail`, so that a
// failing command or an undefined variable fails its block.
type shell struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout, line by line; closed at EOF
	stderr *os.File

	waited  chan struct{} // closed when the shell has exited (its background jobs may not have)
	waitErr error
}

const shellDone = "@@doc block done@@"

func startShell(t *testing.T, dir string) *shell {
	t.Helper()
	sh := &shell{lines: make(chan string, 1024), waited: make(chan struct{})}
	sh.cmd = exec.Command("bash", "--noprofile", "--norc")
	sh.cmd.Dir = dir
	// A group of its own: what a block starts in the background (the page
	// server) is in it, and ends with it.
	sh.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A file, not a pipe: Wait would wait for the background jobs, which
	// hold the shell's stderr, to close it.
	var err error
	sh.stderr, err = os.Create(filepath.Join(t.TempDir(), "stderr"))
	assert.NilError(t, err)
	t.Cleanup(func() { sh.stderr.Close() })
	sh.cmd.Stderr = sh.stderr
	sh.stdin, err = sh.cmd.StdinPipe()
	assert.NilError(t, err)
	stdout, err := sh.cmd.StdoutPipe()
	assert.NilError(t, err)
	assert.NilError(t, sh.cmd.Start())
	t.Cleanup(func() { sh.kill() })
	go func() { sh.waitErr = sh.cmd.Wait(); close(sh.waited) }() // ends when the shell exits
	go func() {                                                  // ends at EOF: when the shell and its background jobs are gone
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			sh.lines <- sc.Text()
		}
		close(sh.lines)
	}()
	_, err = io.WriteString(sh.stdin, "set -euo pipefail\n")
	assert.NilError(t, err)
	return sh
}

// source runs file in the shell (stdin: /dev/null) and returns what it
// printed; an error if the shell exited (a command failed) or timed out.
func (sh *shell) source(file string, timeout time.Duration) (stdout, stderr string, err error) {
	all, _ := os.ReadFile(sh.stderr.Name())
	from := len(all)
	errOut := func() string {
		all, _ := os.ReadFile(sh.stderr.Name())
		return string(all[min(from, len(all)):])
	}
	if _, err := fmt.Fprintf(sh.stdin, "source %q </dev/null\nprintf '\\n%s\\n'\n", file, shellDone); err != nil {
		return "", errOut(), fmt.Errorf("the shell is gone: %w", err)
	}
	var out []string
	deadline := time.After(timeout)
	exited := sh.waited
	for {
		select {
		case line, ok := <-sh.lines:
			if !ok {
				return strings.Join(out, "\n"), errOut(), fmt.Errorf("the shell exited (a command failed; set -euo pipefail): %v", sh.wait())
			}
			if line == shellDone {
				return strings.Join(out, "\n"), errOut(), nil
			}
			out = append(out, line)
		case <-exited:
			// Its background jobs may hold stdout open: take what is
			// there, then give up.
			exited, deadline = nil, time.After(200*time.Millisecond)
			timeout = 0
		case <-deadline:
			if timeout == 0 {
				return strings.Join(out, "\n"), errOut(), fmt.Errorf("the shell exited (a command failed; set -euo pipefail): %v", sh.wait())
			}
			sh.kill()
			return strings.Join(out, "\n"), errOut(), fmt.Errorf("not done after %v", timeout)
		}
	}
}

// wait returns the shell's exit status (within 5 s) once it has exited.
func (sh *shell) wait() error {
	select {
	case <-sh.waited:
		return sh.waitErr
	case <-time.After(5 * time.Second):
		return fmt.Errorf("exit status unknown")
	}
}

// kill ends the shell's process group: the shell and every job it left
// in the background.
func (sh *shell) kill() { syscall.Kill(-sh.cmd.Process.Pid, syscall.SIGKILL) }

// stop ends the shell and its background jobs and checks that they are
// gone.
func (sh *shell) stop(t *testing.T) {
	t.Helper()
	sh.stdin.Close()
	sh.kill()
	for range sh.lines { // EOF once every holder of stdout has exited
	}
	sh.wait() // reaped: a zombie still counts in its group
	pgid := sh.cmd.Process.Pid
	gone := settle(true, func() bool { return syscall.Kill(-pgid, 0) == syscall.ESRCH })
	assert.Assert(t, gone, "processes left in the examples' shell's group %d", sh.cmd.Process.Pid)
}

// runScript runs file with interpreter: node for the ES modules, Debian's
// python3 (where python3-selenium is) for Python.
func runScript(dir, interpreter, file string, timeout time.Duration) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, interpreter, file)
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}
