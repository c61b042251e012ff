package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// depsSandbox is a copy of scripts/deps.sh in a directory of its own (so
// its .cache/ is fresh), and a $PATH holding only the tools it runs,
// with apt-get, sudo and npm replaced by fakes that fail as they do
// without network. Nothing is installed or fetched.
func depsSandbox(t *testing.T) (script, bin string) {
	t.Helper()
	root := t.TempDir()
	assert.NilError(t, os.Mkdir(filepath.Join(root, "scripts"), 0o755))
	src, err := os.ReadFile("../../scripts/deps.sh")
	assert.NilError(t, err)
	script = filepath.Join(root, "scripts", "deps.sh")
	assert.NilError(t, os.WriteFile(script, src, 0o755))

	bin = filepath.Join(root, "bin")
	assert.NilError(t, os.Mkdir(bin, 0o755))
	for _, tool := range []string{"env", "bash", "dirname", "id", "mkdir", "tar", "tail", "rm"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("deps.sh needs %s: %v", tool, err)
		}
		assert.NilError(t, os.Symlink(p, filepath.Join(bin, tool)))
	}
	fake := func(name, body string) {
		assert.NilError(t, os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755))
	}
	fake("sudo", `exec "$@"`+"\n")
	fake("apt-get", `echo "E: Failed to fetch http://deb.debian.org/debian/dists/trixie/InRelease  Temporary failure resolving 'deb.debian.org'" >&2
exit 100
`)
	fake("npm", `case "$1" in
config) echo https://registry.example.test/ ;;
*) echo "npm error code EAI_AGAIN" >&2
   echo "npm error request to https://registry.example.test/wpt-runner failed, reason: getaddrinfo EAI_AGAIN registry.example.test" >&2
   exit 1 ;;
esac
`)
	return script, bin
}

func runDeps(t *testing.T, script, bin string) (string, int) {
	t.Helper()
	cmd := exec.Command(script)
	cmd.Env = []string{"PATH=" + bin, "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else {
		assert.NilError(t, err)
	}
	return string(out), code
}

// When apt-get fails, deps.sh shows apt-get's own error, then says what
// failed and what to do. (jq is not on the sandbox's $PATH: it needs
// installing.)
func TestDepsScriptSaysWhyAptFailed(t *testing.T) {
	script, bin := depsSandbox(t)
	out, code := runDeps(t, script, bin)
	assert.Equal(t, code, 1, out)
	assert.Assert(t, strings.Contains(out, "E: Failed to fetch http://deb.debian.org/"), "apt-get's own error is not shown:\n%s", out)
	assert.Assert(t, strings.Contains(out, "scripts/deps.sh: apt-get update failed (its error is above)"), "%s", out)
	assert.Assert(t, strings.Contains(out, " jq"), "the packages it wanted are not named:\n%s", out)
}

// When npm cannot reach its registry, deps.sh shows npm's own error (it
// used to send it to /dev/null and stop with status 1, silently), then
// says what to do.
func TestDepsScriptSaysWhyNpmFailed(t *testing.T) {
	if exec.Command("/usr/bin/python3", "-c", "import selenium").Run() != nil {
		t.Skip("deps.sh would install python3-selenium first (the apt-get path, tested above)")
	}
	script, bin := depsSandbox(t)
	// Everything apt would install is there (dummies will do: deps.sh
	// only looks for them).
	for _, tool := range []string{"chromium", "chromedriver", "WebKitWebDriver", "Xvfb", "jq", "java"} {
		assert.NilError(t, os.WriteFile(filepath.Join(bin, tool), []byte("#!/bin/sh\n"), 0o755))
	}
	out, code := runDeps(t, script, bin)
	assert.Equal(t, code, 1, out)
	assert.Assert(t, strings.Contains(out, "npm error request to https://registry.example.test/wpt-runner failed"), "npm's own error is not shown:\n%s", out)
	assert.Assert(t, strings.Contains(out, "scripts/deps.sh: npm could not fetch the package wpt-runner@7.0.0 (its error is above)."), "%s", out)
	assert.Assert(t, strings.Contains(out, "If npm cannot reach its registry (https://registry.example.test/)"), "%s", out)
	assert.Assert(t, !strings.Contains(out, "apt-get"), "%s", out)
}
