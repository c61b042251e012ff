package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// run runs the built wdext with args for at most timeout and returns its
// stdout, stderr and exit status (-1: killed at the timeout).
func run(t *testing.T, timeout time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return wdextIn(t, "", nil, timeout, args...)
}

var versionLine = regexp.MustCompile(`^wdext (\(devel\)|v\S+)( \(commit [0-9a-f]{40}(, [0-9TZ:-]+)?(, modified)?\))? go\S+ ` +
	regexp.QuoteMeta(runtime.GOOS+"/"+runtime.GOARCH) + "\n$")

// wdext --version, -version and version print the same line: the module
// version, the commit if stamped, the Go version.
func TestVersion(t *testing.T) {
	var first string
	for _, arg := range []string{"--version", "-version", "version"} {
		out, errOut, code := run(t, 30*time.Second, arg)
		assert.Equal(t, code, 0, "%s: %s", arg, errOut)
		assert.Assert(t, versionLine.MatchString(out), "%s: %q", arg, out)
		assert.Assert(t, strings.Contains(out, " "+runtime.Version()+" "), "built with this test's Go: %q", out)
		if first == "" {
			first = out
		}
		assert.Equal(t, out, first, arg)
	}
	_, errOut, code := run(t, 30*time.Second, "version", "extra")
	assert.Equal(t, code, 2)
	assert.Assert(t, strings.HasPrefix(errOut, "usage: wdext version"), errOut)
}

// A binary built in a git checkout with VCS stamping names its commit.
func TestVersionStamped(t *testing.T) {
	head, err := exec.Command("git", "-C", "../..", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("no git checkout to stamp from: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "wdext")
	out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Skipf("go build -buildvcs=true: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "--version").Output()
	assert.NilError(t, err)
	assert.Assert(t, versionLine.MatchString(string(out)), "%q", out)
	// HEAD may have moved since the build (other people's commits): a
	// commit it is, of this repository.
	m := regexp.MustCompile(`\(commit ([0-9a-f]{40})`).FindSubmatch(out)
	if m == nil {
		// go build stamps nothing in some checkouts (a git worktree, for
		// one): the binary says what it knows, which formatVersion's
		// test covers.
		if info, err := exec.Command("go", "version", "-m", bin).Output(); err == nil && !bytes.Contains(info, []byte("vcs.revision")) {
			t.Skipf("go build stamped no VCS information here (HEAD %s)", bytes.TrimSpace(head))
		}
	}
	assert.Assert(t, m != nil, "no commit in %q (HEAD %s)", out, head)
	assert.NilError(t, exec.Command("git", "-C", "../..", "cat-file", "-e", string(m[1])+"^{commit}").Run())
}

func TestFormatVersion(t *testing.T) {
	goos := " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	assert.Equal(t, formatVersion(nil), "wdext (devel) "+runtime.Version()+goos)
	assert.Equal(t, formatVersion(&debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Version: "(devel)"}}),
		"wdext (devel) go1.99.1"+goos)
	assert.Equal(t, formatVersion(&debug.BuildInfo{
		GoVersion: "go1.99.1",
		Main:      debug.Module{Version: "v0.0.0-20260101120000-0123456789ab+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-01-01T12:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}), "wdext v0.0.0-20260101120000-0123456789ab+dirty (commit 0123456789abcdef0123456789abcdef01234567, 2026-01-01T12:00:00Z, modified) go1.99.1"+goos)
}

// Every subcommand prints its usage as `usage: wdext COMMAND …`, for -h
// (exit status 0) and for a bad flag (2); none prints flag's default
// "Usage of COMMAND:".
func TestSubcommandUsage(t *testing.T) {
	for _, cmd := range []string{"serve", "wpt", "census", "leaks", "version"} {
		t.Run(cmd, func(t *testing.T) {
			_, errOut, code := run(t, 30*time.Second, cmd, "-h")
			assert.Equal(t, code, 0, errOut)
			assert.Assert(t, strings.HasPrefix(errOut, "usage: wdext "+cmd), "%s", errOut)
			assert.Assert(t, !strings.Contains(errOut, "Usage of"), "%s", errOut)

			_, errOut, code = run(t, 30*time.Second, cmd, "--no-such-flag")
			assert.Equal(t, code, 2, errOut)
			assert.Assert(t, strings.HasPrefix(errOut, "flag provided but not defined: -no-such-flag\nusage: wdext "+cmd), "%s", errOut)
			assert.Assert(t, !strings.Contains(errOut, "Usage of"), "%s", errOut)
		})
	}
	_, errOut, code := run(t, 30*time.Second, "serve", "--port", "0", "extra")
	assert.Equal(t, code, 2, errOut)
	assert.Assert(t, strings.Contains(errOut, "usage: wdext serve [flags]"), "%s", errOut)
	_, errOut, code = run(t, 30*time.Second)
	assert.Equal(t, code, 2, errOut)
	assert.Assert(t, strings.HasPrefix(errOut, "usage:\n  wdext serve"), "%s", errOut)
}

// serve refuses to start, before it listens and with the reason, when
// its driver cannot run: missing, not executable, a directory, a bare
// name not on $PATH, or one that exits at once (it says what the driver
// printed). Before, it served anyway and failed every new session.
func TestServeRefusesDriverThatCannotStart(t *testing.T) {
	dir := t.TempDir()
	noexec := filepath.Join(dir, "noexec")
	assert.NilError(t, os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644))
	broken := filepath.Join(dir, "chromedriver")
	assert.NilError(t, os.WriteFile(broken, []byte("#!/bin/sh\n"+
		"echo 'chromedriver: error while loading shared libraries: libnss3.so: cannot open shared object file' >&2\nexit 127\n"), 0o755))
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"missing", []string{"--chromedriver", "/nonexistent/chromedriver"}, "wdext: --chromedriver /nonexistent/chromedriver: no such file or directory\n"},
		{"not executable", []string{"--chromedriver", noexec}, "wdext: --chromedriver " + noexec + ": not executable (-rw-r--r--)"},
		{"directory", []string{"--chromedriver", dir}, "wdext: --chromedriver " + dir + ": is a directory\n"},
		{"not on PATH", []string{"--chromedriver", "no-such-chromedriver"}, `wdext: --chromedriver no-such-chromedriver: exec: "no-such-chromedriver": executable file not found in $PATH`},
		{"exits at start", []string{"--chromedriver", broken}, "wdext: chromedriver did not start: " + broken + " exited before it was ready; it printed:\n" +
			"chromedriver: error while loading shared libraries: libnss3.so: cannot open shared object file\n"},
		{"webkitgtk missing", []string{"--engine", "webkitgtk", "--webkitwebdriver", "/nonexistent/WebKitWebDriver"}, "wdext: --webkitwebdriver /nonexistent/WebKitWebDriver: no such file or directory\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errOut, code := run(t, 30*time.Second, append([]string{"serve", "--port", "0"}, c.args...)...)
			assert.Equal(t, code, 1, "exit status (-1: still serving after 30 s): %s", errOut)
			assert.Assert(t, strings.Contains(errOut, c.want), "want %q in:\n%s", c.want, errOut)
			assert.Assert(t, !strings.Contains(errOut, "wdext serving"), "it listened first:\n%s", errOut)
		})
	}
}
