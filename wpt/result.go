package wpt

import (
	"encoding/json"
	"fmt"
	"time"
)

// Status is a wptrunner status string. Tests (the harness) and subtests use
// different sets, which share TIMEOUT and PRECONDITION_FAILED.
type Status string

// Harness-level statuses of a whole test.
const (
	StatusOK                 Status = "OK"
	StatusError              Status = "ERROR"
	StatusTimeout            Status = "TIMEOUT"
	StatusPreconditionFailed Status = "PRECONDITION_FAILED"
	StatusCrash              Status = "CRASH"
	StatusSkip               Status = "SKIP"
	// StatusInternalError means the runner, not the test, failed.
	StatusInternalError Status = "INTERNAL-ERROR"
)

// Subtest statuses (plus StatusTimeout and StatusPreconditionFailed).
const (
	StatusPass   Status = "PASS"
	StatusFail   Status = "FAIL"
	StatusNotRun Status = "NOTRUN"
)

// knownStatuses guards expectation files against typos.
var knownStatuses = map[Status]bool{
	StatusOK: true, StatusError: true, StatusTimeout: true,
	StatusPreconditionFailed: true, StatusCrash: true, StatusSkip: true,
	StatusInternalError: true, StatusPass: true, StatusFail: true,
	StatusNotRun: true,
}

// Result is the outcome of one test page.
type Result struct {
	// Test is the test's URL path with any variant, e.g.
	// "/dir/foo.any.worker.html?q=1"; it is the wptreport "test" id.
	Test     string
	Status   Status
	Message  string
	Stack    string
	Duration time.Duration
	Subtests []SubtestResult
	// Attachments are what the test handed over for the HTML report
	// (test_driver.wdext_attach, and with Runner.Capture the traces and
	// memory measurements its top document got), in order.
	Attachments []Attachment
	// Forced are the test's test_driver.force_sample() calls: when each
	// was asked for and when it settled, in milliseconds since the epoch
	// (performance.timeOrigin + performance.now() of the top document).
	// The forced sample of each call lies inside its span.
	Forced []Span
}

// Attachment is one result a test handed over: a JS Self-Profiling trace,
// a Measure Memory result, a census or a leak verdict, for
// `wdext wpt --html` to draw.
type Attachment struct {
	// Kind is AttachTrace, AttachMeasurement, AttachCensus or AttachLeaks;
	// the report shows others as JSON.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Data is the result's JSON.
	Data json.RawMessage `json:"data"`
	// TimeOrigin is performance.timeOrigin of the realm that handed it
	// over: a trace's timestamps are milliseconds after it.
	TimeOrigin float64 `json:"timeOrigin"`
}

// Span is a time span in milliseconds since the epoch.
type Span struct {
	Start, End float64
}

// The kinds of Attachment the HTML report draws.
const (
	AttachTrace       = "trace"       // a ProfilerTrace (await profiler.stop())
	AttachMeasurement = "measurement" // a MemoryMeasurement
	AttachCensus      = "census"      // a Debugger.Memory-style census
	AttachLeaks       = "leaks"       // a wire.LeakReport
)

// SubtestResult is the outcome of one testharness.js test inside a page.
type SubtestResult struct {
	Name    string
	Status  Status
	Message string
	Stack   string
}

// testharness.js numbers its statuses: TestsStatus.statuses for the harness
// and Test.statuses for subtests. wptrunner's TestharnessResultConverter maps
// them to these strings.
var (
	harnessCodes = []Status{StatusOK, StatusError, StatusTimeout, StatusPreconditionFailed}
	subtestCodes = []Status{StatusPass, StatusFail, StatusTimeout, StatusNotRun, StatusPreconditionFailed}
)

// harnessPayload is what the page posts from testharness.js's completion
// callback: {status: harness_status, tests: tests}, each structured-cloned.
type harnessPayload struct {
	Status *struct {
		Status  *int    `json:"status"`
		Message *string `json:"message"`
		Stack   *string `json:"stack"`
	} `json:"status"`
	Tests []struct {
		Name    string  `json:"name"`
		Status  *int    `json:"status"`
		Message *string `json:"message"`
		Stack   *string `json:"stack"`
	} `json:"tests"`
}

// ParseHarnessResult decodes the testharness.js completion payload
//
//	{"status": {"status": 0, "message": null, "stack": null},
//	 "tests": [{"name": "…", "status": 1, "message": "…", "stack": "…"}]}
//
// into a Result for test. Duration is left for the caller, who timed it.
func ParseHarnessResult(test string, payload []byte) (Result, error) {
	var p harnessPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return Result{}, fmt.Errorf("wpt: decoding testharness result for %s: %w", test, err)
	}
	if p.Status == nil || p.Status.Status == nil {
		return Result{}, fmt.Errorf("wpt: testharness result for %s has no harness status", test)
	}
	status, err := lookupCode(harnessCodes, *p.Status.Status)
	if err != nil {
		return Result{}, fmt.Errorf("wpt: harness status of %s: %w", test, err)
	}
	r := Result{
		Test:     test,
		Status:   status,
		Message:  deref(p.Status.Message),
		Stack:    deref(p.Status.Stack),
		Subtests: make([]SubtestResult, 0, len(p.Tests)),
	}
	for _, t := range p.Tests {
		if t.Status == nil {
			return Result{}, fmt.Errorf("wpt: subtest %q of %s has no status", t.Name, test)
		}
		s, err := lookupCode(subtestCodes, *t.Status)
		if err != nil {
			return Result{}, fmt.Errorf("wpt: subtest %q of %s: %w", t.Name, test, err)
		}
		r.Subtests = append(r.Subtests, SubtestResult{
			Name:    t.Name,
			Status:  s,
			Message: deref(t.Message),
			Stack:   deref(t.Stack),
		})
	}
	return r, nil
}

func lookupCode(codes []Status, code int) (Status, error) {
	if code < 0 || code >= len(codes) {
		return "", fmt.Errorf("unknown status code %d", code)
	}
	return codes[code], nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
