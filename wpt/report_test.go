package wpt

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"
)

func fixtureRun() (Run, Expectations) {
	start := time.UnixMilli(1700000000000).UTC()
	run := Run{
		Info:  map[string]any{"product": "chrome", "browser_version": "120.0", "os": "linux"},
		Start: start,
		End:   start.Add(12345 * time.Millisecond),
		Results: []Result{
			{Test: "/js-self-profiling/a.https.html", Status: StatusOK, Duration: 1500 * time.Millisecond, Subtests: []SubtestResult{
				{Name: "wait for load event", Status: StatusPass},
				{Name: "functions <b>&</b> are profiled", Status: StatusFail, Message: "assert_true: expected true got false", Stack: "at test (a.html:10)"},
			}},
			{Test: "/measure-memory/m.window.html", Status: StatusError, Message: "Error: boom\nmore", Duration: 250 * time.Millisecond},
			{Test: "/measure-memory/n.any.worker.html", Status: StatusTimeout, Duration: 10 * time.Second, Subtests: []SubtestResult{
				{Name: "known failure", Status: StatusFail, Message: "expected"},
				{Name: "flaky", Status: StatusTimeout},
				{Name: "never ran", Status: StatusNotRun},
			}},
			{Test: "/skipped.html", Status: StatusSkip},
		},
	}
	exp := Expectations{"/measure-memory/n.any.worker.html": {
		Status: Expected{Status: StatusTimeout},
		Subtests: map[string]Expected{
			"known failure": {Status: StatusFail},
			"flaky":         {Status: StatusPass, KnownIntermittent: []Status{StatusTimeout}},
		},
	}}
	return run, exp
}

func TestWriteWPTReport(t *testing.T) {
	run, exp := fixtureRun()
	var buf bytes.Buffer
	assert.NilError(t, WriteWPTReport(&buf, run, exp))
	golden.Assert(t, buf.String(), "wptreport.json.golden")

	var rep struct {
		RunInfo   map[string]any               `json:"run_info"`
		TimeStart int64                        `json:"time_start"`
		TimeEnd   int64                        `json:"time_end"`
		Results   []map[string]json.RawMessage `json:"results"`
	}
	assert.NilError(t, json.Unmarshal(buf.Bytes(), &rep))
	assert.Check(t, is.Equal(rep.TimeStart, int64(1700000000000)))
	assert.Check(t, is.Equal(rep.TimeEnd, int64(1700000012345)))
	assert.Check(t, is.Equal(rep.RunInfo["product"], "chrome"))
	first := rep.Results[0]
	assert.Check(t, is.Equal(string(first["message"]), "null"))
	assert.Check(t, is.Equal(string(first["duration"]), "1500"))
	assert.Check(t, first["expected"] == nil, "no expected when the status matches")
	var subtests []map[string]json.RawMessage
	assert.NilError(t, json.Unmarshal(first["subtests"], &subtests))
	assert.Check(t, subtests[0]["expected"] == nil)
	assert.Check(t, is.Equal(string(subtests[1]["expected"]), `"PASS"`))
	assert.Check(t, is.Equal(string(subtests[1]["known_intermittent"]), "[]"))
	assert.Check(t, is.Equal(string(rep.Results[1]["expected"]), `"OK"`))
	assert.Check(t, rep.Results[3]["expected"] == nil, "SKIP never carries expected")
}

func TestWriteJUnit(t *testing.T) {
	run, exp := fixtureRun()
	var buf bytes.Buffer
	assert.NilError(t, WriteJUnit(&buf, run, exp))
	golden.Assert(t, buf.String(), "junit.xml.golden")

	type problem struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Errors   int      `xml:"errors,attr"`
		Skipped  int      `xml:"skipped,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Tests int    `xml:"tests,attr"`
			Cases []struct {
				Classname string    `xml:"classname,attr"`
				Name      string    `xml:"name,attr"`
				Failure   *problem  `xml:"failure"`
				Error     *problem  `xml:"error"`
				Skipped   *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	assert.NilError(t, xml.Unmarshal(buf.Bytes(), &doc), "the XML must parse")
	assert.Check(t, is.Equal(doc.Tests, 9))
	assert.Check(t, is.Equal(doc.Failures, 1))
	assert.Check(t, is.Equal(doc.Errors, 2))
	assert.Check(t, is.Equal(doc.Skipped, 1))
	assert.Assert(t, is.Len(doc.Suites, 4))

	harnessCase, failing := doc.Suites[0].Cases[0], doc.Suites[0].Cases[2]
	assert.Check(t, is.Equal(harnessCase.Name, "a.https.html"))
	assert.Check(t, harnessCase.Failure == nil)
	assert.Check(t, is.Equal(failing.Classname, "/js-self-profiling/a.https.html"))
	assert.Check(t, is.Equal(failing.Name, "functions <b>&</b> are profiled"))
	assert.Assert(t, failing.Failure != nil)
	assert.Check(t, is.Equal(failing.Failure.Message, "Expected PASS, got FAIL"))
	assert.Check(t, is.Contains(failing.Failure.Text, "at test (a.html:10)"))
	assert.Check(t, doc.Suites[1].Cases[0].Error != nil, "unexpected ERROR is an <error>")
	for _, c := range doc.Suites[2].Cases[:3] {
		assert.Check(t, c.Failure == nil && c.Error == nil, "expected results do not fail: %+v", c)
	}
	assert.Check(t, doc.Suites[2].Cases[3].Error != nil, "unexpected NOTRUN is an <error>")
	assert.Check(t, doc.Suites[3].Cases[0].Skipped != nil, "SKIP is <skipped>")
}

func TestWriteSummary(t *testing.T) {
	run, exp := fixtureRun()
	var buf bytes.Buffer
	assert.NilError(t, WriteSummary(&buf, run, exp))
	golden.Assert(t, buf.String(), "summary.txt.golden")

	buf.Reset()
	run.Results = run.Results[:1]
	run.Results[0].Subtests = run.Results[0].Subtests[:1]
	assert.NilError(t, WriteSummary(&buf, run, exp))
	assert.Check(t, is.Contains(buf.String(), "All results were as expected."))
}

func TestProgress(t *testing.T) {
	run, exp := fixtureRun()
	var buf bytes.Buffer
	p := NewProgress(&buf, 12, exp)
	for _, r := range run.Results {
		p.Done(r)
	}
	golden.Assert(t, buf.String(), "progress.txt.golden")

	// Concurrent use must not race (go test -race) or lose lines.
	buf.Reset()
	p = NewProgress(&buf, 50, nil)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { p.Done(Result{Test: "/t.html", Status: StatusOK}) })
	}
	wg.Wait()
	assert.Check(t, is.Equal(strings.Count(buf.String(), "\n"), 50))
	assert.Check(t, is.Contains(buf.String(), "[50/50]"))
}
