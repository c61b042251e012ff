package wpt

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Run is a finished run: what the report writers take.
type Run struct {
	// Info is wptreport's run_info (product, browser_version, os, …).
	Info    map[string]any
	Start   time.Time
	End     time.Time
	Results []Result
}

// The wptreport JSON shapes, with fields in the order wptrunner's
// WptreportFormatter produces them.
type (
	wptReport struct {
		RunInfo   map[string]any `json:"run_info"`
		TimeStart int64          `json:"time_start"`
		Results   []wptResult    `json:"results"`
		Subsuites map[string]any `json:"subsuites"`
		TimeEnd   int64          `json:"time_end"`
	}
	wptResult struct {
		Test              string       `json:"test"`
		Subsuite          string       `json:"subsuite"`
		Subtests          []wptSubtest `json:"subtests"`
		Status            Status       `json:"status"`
		Message           *string      `json:"message"`
		Duration          int64        `json:"duration"`
		Expected          Status       `json:"expected,omitempty"`
		KnownIntermittent []Status     `json:"known_intermittent"`
	}
	wptSubtest struct {
		Name              string   `json:"name"`
		Status            Status   `json:"status"`
		Message           *string  `json:"message"`
		Expected          Status   `json:"expected,omitempty"`
		KnownIntermittent []Status `json:"known_intermittent"`
	}
)

// WriteWPTReport writes run as wptrunner's --log-wptreport JSON, the format
// wpt.fyi ingests, with the same keys in the same order. As mozlog does,
// "expected" appears only when the status differs from it (and is not SKIP),
// known_intermittent is always a list, times are milliseconds since the
// epoch, durations milliseconds, and an empty message is null. Unlike
// Python's json.dumps the output is compact and not ASCII-escaped, which
// JSON readers do not notice.
func WriteWPTReport(w io.Writer, run Run, exp Expectations) error {
	rep := wptReport{
		RunInfo:   run.Info,
		TimeStart: run.Start.UnixMilli(),
		Results:   make([]wptResult, 0, len(run.Results)),
		Subsuites: map[string]any{},
		TimeEnd:   run.End.UnixMilli(),
	}
	if rep.RunInfo == nil {
		rep.RunInfo = map[string]any{}
	}
	for _, r := range run.Results {
		x := exp.ForTest(r.Test)
		res := wptResult{
			Test:              r.Test,
			Subtests:          make([]wptSubtest, 0, len(r.Subtests)),
			Status:            r.Status,
			Message:           nullable(r.Message),
			Duration:          r.Duration.Milliseconds(),
			Expected:          expectedField(x, r.Status),
			KnownIntermittent: nonNil(x.KnownIntermittent),
		}
		for _, s := range r.Subtests {
			sx := exp.ForSubtest(r.Test, s.Name)
			res.Subtests = append(res.Subtests, wptSubtest{
				Name:              s.Name,
				Status:            s.Status,
				Message:           nullable(s.Message),
				Expected:          expectedField(sx, s.Status),
				KnownIntermittent: nonNil(sx.KnownIntermittent),
			})
		}
		rep.Results = append(rep.Results, res)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}

func expectedField(x Expected, s Status) Status {
	if s == x.Status || s == StatusSkip {
		return ""
	}
	return x.Status
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nonNil(s []Status) []Status {
	if s == nil {
		return []Status{}
	}
	return s
}

// The JUnit XML shapes.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Errors   int         `xml:"errors,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Time     string      `xml:"time,attr"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Classname string        `xml:"classname,attr"`
		Name      string        `xml:"name,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitProblem `xml:"failure"`
		Error     *junitProblem `xml:"error"`
		Skipped   *struct{}     `xml:"skipped"`
	}
	junitProblem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
)

// WriteJUnit writes run as JUnit XML: a testsuite per test page, holding a
// testcase for the page's harness status (named after the file) and one per
// subtest (named after it), all with the test path as classname. As in
// mozlog's xunit formatter, only unexpected results fail: <error> for
// unexpected ERROR, CRASH, INTERNAL-ERROR and NOTRUN, <failure> for the
// rest, and <skipped> for SKIP. So a failure listed in the expectations
// keeps CI green, like the exit status.
func WriteJUnit(w io.Writer, run Run, exp Expectations) error {
	all := junitSuites{Name: "wpt", Time: seconds(run.End.Sub(run.Start))}
	for _, r := range run.Results {
		suite := junitSuite{Name: r.Test, Time: seconds(r.Duration)}
		base := r.Test[strings.LastIndexByte(r.Test, '/')+1:]
		suite.add(junitCase{Classname: r.Test, Name: base, Time: seconds(r.Duration)},
			exp.ForTest(r.Test), r.Status, r.Message, r.Stack)
		for _, s := range r.Subtests {
			suite.add(junitCase{Classname: r.Test, Name: s.Name, Time: "0"},
				exp.ForSubtest(r.Test, s.Name), s.Status, s.Message, s.Stack)
		}
		all.Tests += suite.Tests
		all.Failures += suite.Failures
		all.Errors += suite.Errors
		all.Skipped += suite.Skipped
		all.Suites = append(all.Suites, suite)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func (s *junitSuite) add(c junitCase, x Expected, got Status, message, stack string) {
	s.Tests++
	switch {
	case got == StatusSkip:
		c.Skipped = &struct{}{}
		s.Skipped++
	case !x.Matches(got):
		p := &junitProblem{
			Message: fmt.Sprintf("Expected %s, got %s", x.Status, got),
			Type:    string(got),
			Text:    strings.TrimSpace(message + "\n" + stack),
		}
		switch got {
		case StatusError, StatusCrash, StatusInternalError, StatusNotRun:
			c.Error = p
			s.Errors++
		default:
			c.Failure = p
			s.Failures++
		}
	}
	s.Cases = append(s.Cases, c)
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// WriteSummary writes a human summary: counts per status for tests and
// subtests, then every unexpected result.
func WriteSummary(w io.Writer, run Run, exp Expectations) error {
	tests, subtests := map[Status]int{}, map[Status]int{}
	nsub := 0
	var unexpected []Unexpected
	for _, r := range run.Results {
		tests[r.Status]++
		for _, s := range r.Subtests {
			subtests[s.Status]++
			nsub++
		}
		unexpected = append(unexpected, exp.Unexpected(r)...)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Ran %d tests (%d subtests) in %s.\n", len(run.Results), nsub, run.End.Sub(run.Start).Round(time.Millisecond))
	fmt.Fprintf(&b, "  tests:    %s\n", countLine(tests))
	fmt.Fprintf(&b, "  subtests: %s\n", countLine(subtests))
	if len(unexpected) == 0 {
		b.WriteString("All results were as expected.\n")
	} else {
		fmt.Fprintf(&b, "Unexpected results (%d):\n", len(unexpected))
		for _, u := range unexpected {
			b.WriteString("  " + describeUnexpected(u) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func describeUnexpected(u Unexpected) string {
	s := u.Test
	if u.Subtest != "" {
		s += " | " + u.Subtest
	}
	s += fmt.Sprintf(": %s (expected %s)", u.Status, u.Expected)
	if u.Message != "" {
		msg, _, _ := strings.Cut(u.Message, "\n")
		s += ": " + msg
	}
	return s
}

// countLine renders {PASS: 3, FAIL: 1} as "FAIL 1, PASS 3".
func countLine(counts map[Status]int) string {
	if len(counts) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(counts))
	for s := range counts {
		keys = append(keys, string(s))
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, counts[Status(k)])
	}
	return strings.Join(parts, ", ")
}
