package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// wdext report makes each kind of report from saved results, to a file
// or standard output, and says what is wrong with bad input.
func TestReportCommand(t *testing.T) {
	data := func(name string) string { return filepath.Join("..", "..", "report", "testdata", name) }
	out := filepath.Join(t.TempDir(), "r.html")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"trace", data("trace.json"), "--forced", "139.5-140.5,170"}, `class="forced"`},
		{[]string{"census", data("census-before.json")}, `data-name="HTMLDivElement"`},
		{[]string{"census-diff", data("census-before.json"), data("census-after.json")}, `objects › Leaky`},
		{[]string{"leaks", data("leaks.json")}, `makeFoos`},
	} {
		t.Run(c.args[0], func(t *testing.T) {
			os.Remove(out)
			_, errOut, code := run(t, 30*time.Second, append([]string{"report", "-o", out}, c.args...)...)
			assert.Equal(t, code, 0, errOut)
			b, err := os.ReadFile(out)
			assert.NilError(t, err)
			assert.Assert(t, strings.HasPrefix(string(b), "<!doctype html>"))
			assert.Assert(t, strings.Contains(string(b), c.want), "no %s", c.want)
			stdout, _, code := run(t, 30*time.Second, append([]string{"report"}, c.args...)...)
			assert.Equal(t, code, 0)
			assert.Equal(t, stdout, string(b))
		})
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"census", data("trace.json")}, 1, "trace.json: census.frames[0].column: a number where a census has"},
		{[]string{"trace", data("census-before.json")}, 1, "census-before.json: not a ProfilerTrace: none of resources"},
		{[]string{"leaks", data("trace.json")}, 1, `not a leak report: no "leaks"`},
		{[]string{"trace", "no-such.json"}, 1, "no-such.json: no such file"},
		{[]string{"trace", data("trace.json"), "--forced", "5-1"}, 1, `forced sample span "5-1"`},
		{[]string{"census", "--forced", "1", data("census-before.json")}, 2, "--forced is for traces"},
		{[]string{"census-diff", data("census-before.json")}, 2, "want BEFORE.json AFTER.json"},
		{[]string{"flames", "x"}, 2, `unknown kind "flames"`},
		{nil, 2, "no KIND"},
		{[]string{"--no-such-flag"}, 2, "flag provided but not defined: -no-such-flag\nusage: wdext report"},
	} {
		_, errOut, code := run(t, 30*time.Second, append([]string{"report"}, c.args...)...)
		assert.Equal(t, code, c.code, "%v: %s", c.args, errOut)
		assert.Assert(t, strings.Contains(errOut, c.want), "%v: %s", c.args, errOut)
	}
	_, errOut, code := run(t, 30*time.Second, "report", "-h")
	assert.Equal(t, code, 0)
	assert.Assert(t, strings.HasPrefix(errOut, "usage: wdext report"), errOut)
}

// Issue 28, finding 6: wdext report census /dev/zero grew to 9.4 GB in
// 20 s. Now it is refused at byte 0, as census and leaks refuse it. The
// address space is capped (ulimit -v) so that a regression fails here
// rather than taking the machine's memory; the peak RSS is the kernel's.
func TestReportRefusesEndlessInput(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	cmd := exec.Command("sh", "-c", `ulimit -v 4000000 && exec "$0" "$@"`, wdextBinary(t), "report", "census", "/dev/zero")
	var errOut strings.Builder
	cmd.Stderr = &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	assert.Assert(t, errors.As(err, &exit), "%v: %s", err, errOut.String())
	assert.Equal(t, exit.ExitCode(), 1, errOut.String())
	assert.Assert(t, strings.Contains(errOut.String(), `/dev/zero: not JSON: invalid character '\x00' looking for beginning of value (byte 0)`), errOut.String())
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB on Linux
	assert.Assert(t, rss < 300<<10, "peak RSS %d KiB", rss)
	t.Logf("peak RSS %d KiB", rss)

	big := filepath.Join(t.TempDir(), "big.json")
	assert.NilError(t, os.WriteFile(big, append([]byte("["), bytes.Repeat([]byte(" "), 2<<20)...), 0o644))
	_, stderr, code := run(t, 30*time.Second, "report", "census", "--max-input", "1048576", big)
	assert.Equal(t, code, 1, stderr)
	assert.Assert(t, strings.Contains(stderr, "big.json: larger than 1 MiB, the most wdext report reads (--max-input)"), stderr)
}
