package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Root is the repository's top directory.
func Root() string { return filepath.Dir(Testdata()) }

// RequireTool skips the test when name is missing (check, if given, is a
// command that must succeed), unless WDEXT_REQUIRE_BROWSER is set
// (make test), where it fails.
func RequireTool(t testing.TB, name string, check ...string) {
	t.Helper()
	var err error
	if len(check) > 0 {
		var out []byte
		out, err = exec.Command(check[0], check[1:]...).CombinedOutput()
		if err != nil {
			err = fmt.Errorf("%v: %s", err, bytes.TrimSpace(out))
		}
	} else {
		_, err = exec.LookPath(name)
	}
	if err == nil {
		return
	}
	if os.Getenv("WDEXT_REQUIRE_BROWSER") != "" {
		t.Fatalf("this test needs %s (scripts/deps.sh installs it): %v", name, err)
	}
	t.Skipf("this test needs %s (scripts/deps.sh installs it): %v", name, err)
}

// RequireNodeClients skips (fails under WDEXT_REQUIRE_BROWSER) when node
// or the Node.js clients scripts/deps.sh installs in .cache/node are
// missing, and returns that node_modules directory.
func RequireNodeClients(t testing.TB) string {
	t.Helper()
	RequireTool(t, "node")
	nm := filepath.Join(Root(), ".cache", "node", "node_modules")
	for _, pkg := range []string{"selenium-webdriver", "webdriverio"} {
		if _, err := os.Stat(filepath.Join(nm, pkg, "package.json")); err != nil {
			if os.Getenv("WDEXT_REQUIRE_BROWSER") != "" {
				t.Fatalf("the Node.js client tests need %s in .cache/node (scripts/deps.sh installs it): %v", pkg, err)
			}
			t.Skipf("the Node.js client tests need %s in .cache/node (scripts/deps.sh installs it): %v", pkg, err)
		}
	}
	return nm
}

// RunScript runs a test script (argv) that prints a line per check and
// "N passed, N failed" (Run), and fails the test, with its output, unless
// it exits 0 with no check failed.
func RunScript(t testing.TB, env []string, argv ...string) string {
	t.Helper()
	out, err := Run(env, argv...)
	if err != nil || !strings.Contains(out, " passed, 0 failed") {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	t.Logf("%s", out)
	return out
}

// Run runs argv from the repository's root with env added, in a process
// group of its own that is killed when it is done (or after 4 minutes),
// and returns its output and how it ended.
func Run(env []string, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = Root()
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever it left
	}
	return string(out), err
}
