package main

import (
	"os"
	"path/filepath"
	"strings"
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
