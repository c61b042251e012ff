package wpt

import (
	"fmt"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestParseHarnessResult(t *testing.T) {
	payload := `{"status": {"status": 0, "message": null, "stack": null},
		"tests": [
			{"name": "passes", "status": 0, "message": null, "stack": null, "properties": {}},
			{"name": "fails", "status": 1, "message": "assert_true: expected true got false", "stack": "at f"},
			{"name": "times out", "status": 2},
			{"name": "not run", "status": 3, "message": null},
			{"name": "optional", "status": 4, "message": "unsupported"}
		], "type": "complete"}`
	got, err := ParseHarnessResult("/a/b.html", []byte(payload))
	assert.NilError(t, err)
	assert.DeepEqual(t, got, Result{Test: "/a/b.html", Status: StatusOK, Subtests: []SubtestResult{
		{Name: "passes", Status: StatusPass},
		{Name: "fails", Status: StatusFail, Message: "assert_true: expected true got false", Stack: "at f"},
		{Name: "times out", Status: StatusTimeout},
		{Name: "not run", Status: StatusNotRun},
		{Name: "optional", Status: StatusPreconditionFailed, Message: "unsupported"},
	}})

	for code, status := range []Status{StatusOK, StatusError, StatusTimeout, StatusPreconditionFailed} {
		r, err := ParseHarnessResult("/t", fmt.Appendf(nil, `{"status":{"status":%d,"message":"m"},"tests":[]}`, code))
		assert.NilError(t, err)
		assert.Check(t, is.DeepEqual(r, Result{Test: "/t", Status: status, Message: "m", Subtests: []SubtestResult{}}))
	}

	for _, bad := range []string{
		`not json`,
		`{"tests": []}`,
		`{"status": {"message": "x"}, "tests": []}`,
		`{"status": {"status": 4}, "tests": []}`,
		`{"status": {"status": 0}, "tests": [{"name": "x", "status": 5}]}`,
		`{"status": {"status": 0}, "tests": [{"name": "x"}]}`,
	} {
		_, err := ParseHarnessResult("/t", []byte(bad))
		assert.Check(t, err != nil, bad)
	}
}
