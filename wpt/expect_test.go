package wpt

import (
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestExpectationsJSON(t *testing.T) {
	e, err := ParseExpectationsJSON(strings.NewReader(`{
		"/a/t.html": {"status": "ERROR", "subtests": {"one": "FAIL", "flaky": ["PASS", "FAIL"]}},
		"/a/d.html": {"disabled": "crashes the GPU process"},
		"/a/s.html": {"status": "PRECONDITION_FAILED", "subtests": {"x": "TIMEOUT"}}
	}`))
	assert.NilError(t, err)
	checkExpectations(t, e)
	assert.Check(t, is.Equal(e.Disabled("/a/t.html"), ""))

	for _, bad := range []string{
		`{"/a": {"status": "MAYBE"}}`,
		`{"/a": {"status": []}}`,
		`{"/a": {"status": 1}}`,
		`{"/a": {"subtests": {"x": "NOPE"}}}`,
		`{"/a": {"stauts": "OK"}}`,
		`{"a.html": {}}`,
	} {
		_, err := ParseExpectationsJSON(strings.NewReader(bad))
		assert.Check(t, err != nil, bad)
	}
}

// checkExpectations checks the expectations both formats' fixtures share.
func checkExpectations(t *testing.T, e Expectations) {
	t.Helper()
	for _, tc := range []struct {
		test, subtest string
		want          Expected
	}{
		{"/a/t.html", "", Expected{Status: StatusError}},
		{"/a/t.html", "one", Expected{Status: StatusFail}},
		{"/a/t.html", "flaky", Expected{Status: StatusPass, KnownIntermittent: []Status{StatusFail}}},
		{"/a/t.html", "other", Expected{Status: StatusPass}},
		{"/a/s.html", "", Expected{Status: StatusPreconditionFailed}},
		{"/a/s.html", "x", Expected{Status: StatusTimeout}},
		{"/unknown.html", "", Expected{Status: StatusOK}},
		{"/unknown.html", "x", Expected{Status: StatusPass}},
	} {
		got := e.ForTest(tc.test)
		if tc.subtest != "" {
			got = e.ForSubtest(tc.test, tc.subtest)
		}
		got.KnownIntermittent = nonNil(got.KnownIntermittent)
		tc.want.KnownIntermittent = nonNil(tc.want.KnownIntermittent)
		assert.Check(t, is.DeepEqual(got, tc.want), "%s %q", tc.test, tc.subtest)
	}
	assert.Check(t, is.Equal(e.Disabled("/a/d.html"), "crashes the GPU process"))
}

const tIni = `# metadata for t.html
[t.html]
  bug: https://crbug.com/1
  expected:
    if os == "linux": TIMEOUT
    ERROR
  [one]
    expected: FAIL # known
  [flaky]
    expected: [PASS, FAIL]
  [with \] bracket and \\ backslash]
    expected:
      if debug: FAIL
  [cond with default]
    expected:
      if os == "mac": PASS
      "NOTRUN"

[d.html]
  disabled: crashes the GPU process
`

// The test-level key after the subtest section belongs to the test.
const sIni = `[s.html]
  [x]
    expected: TIMEOUT
  expected: PRECONDITION_FAILED
`

func TestExpectationsMetadataDir(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"a/t.html.ini":     tIni,
		"a/s.html.ini":     sIni,
		"a/__dir__.ini":    "prefs: [a:b]\n",
		"a/readme.txt":     "not metadata",
		"b/c/q.any.js.ini": "[q.any.worker.html]\n  expected: CRASH\n",
	})
	e, err := LoadExpectations(dir)
	assert.NilError(t, err)
	checkExpectations(t, e)
	assert.Check(t, is.Equal(e.ForSubtest("/a/t.html", `with ] bracket and \ backslash`).Status, StatusPass),
		"a conditional value without a default keeps PASS")
	assert.Check(t, is.Equal(e.ForSubtest("/a/t.html", "cond with default").Status, StatusNotRun))
	assert.Check(t, is.Equal(e.ForTest("/b/c/q.any.worker.html").Status, StatusCrash))
}

func TestExpectationsFiles(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"one.ini":  strings.ReplaceAll(strings.ReplaceAll(tIni, "[t.html]", "[/a/t.html]"), "[d.html]", "[/a/d.html]") + strings.ReplaceAll(sIni, "[s.html]", "[/a/s.html]"),
		"e.json":   `{"/a/t.html": {"status": "ERROR"}}`,
		"e.txt":    `{}`,
		"bad.ini":  "[t.html]\n  expected: SOMETIMES\n",
		"bad2.ini": "[t.html]\n  [sub]\n    [subsub]\n",
		"bad3.ini": "[t.html\n",
		"bad4.ini": "  [sub]\n",
		"bad5.ini": "[t.html]\n  expected: [PASS, FAIL\n",
	})
	e, err := LoadExpectations(filepath.Join(dir, "one.ini"))
	assert.NilError(t, err)
	checkExpectations(t, e)
	e, err = LoadExpectations(filepath.Join(dir, "e.json"))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(e.ForTest("/a/t.html").Status, StatusError))
	for _, bad := range []string{"e.txt", "bad.ini", "bad2.ini", "bad3.ini", "bad4.ini", "bad5.ini", "missing.json"} {
		_, err := LoadExpectations(filepath.Join(dir, bad))
		assert.Check(t, err != nil, bad)
	}
}

func TestUnexpected(t *testing.T) {
	e := Expectations{"/t.html": {
		Status:   Expected{Status: StatusTimeout},
		Subtests: map[string]Expected{"a": {Status: StatusFail}, "b": {Status: StatusPass, KnownIntermittent: []Status{StatusTimeout}}},
	}}
	r := Result{Test: "/t.html", Status: StatusTimeout, Subtests: []SubtestResult{
		{Name: "a", Status: StatusFail},
		{Name: "b", Status: StatusTimeout},
		{Name: "c", Status: StatusPass},
		{Name: "d", Status: StatusSkip},
	}}
	assert.Check(t, is.Len(e.Unexpected(r), 0))
	assert.Check(t, is.Equal(ExitCode([]Result{r}, e), 0))

	r.Status = StatusOK
	r.Subtests[0].Status = StatusPass
	r.Subtests[2] = SubtestResult{Name: "c", Status: StatusFail, Message: "boom"}
	assert.Check(t, is.DeepEqual(e.Unexpected(r), []Unexpected{
		{Test: "/t.html", Status: StatusOK, Expected: StatusTimeout},
		{Test: "/t.html", Subtest: "a", Status: StatusPass, Expected: StatusFail},
		{Test: "/t.html", Subtest: "c", Status: StatusFail, Expected: StatusPass, Message: "boom"},
	}))
	assert.Check(t, is.Equal(ExitCode([]Result{{Test: "/x", Status: StatusOK}, r}, e), 1))
	// nil expectations expect OK and PASS.
	assert.Check(t, is.Equal(ExitCode([]Result{{Test: "/x", Status: StatusOK}}, nil), 0))
	assert.Check(t, is.Equal(ExitCode([]Result{{Test: "/x", Status: StatusCrash}}, nil), 1))
}
