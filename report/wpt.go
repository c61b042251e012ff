package report

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/wdext/wdext/wpt"
)

type wptView struct {
	Tests, UnexpectedTests int
	Subtests, SubPass      int
	UnexpectedSubs         int
	Attachments            int
	Duration               string
	Info                   []kv
	Rows                   []wptRow
}

type kv struct{ K, V string }

type wptRow struct {
	Test, Status, Expected string
	Unexpected             bool
	UnexpectedSubs         int
	Message                string
	Duration               string
	Bar                    float64
	Pass                   int
	Subtests               []subRow
	Sections               []section
	Open                   bool
}

type subRow struct {
	Name, Status, Expected, Message string
	Unexpected                      bool
}

// AddWPT makes the page a `wdext wpt` run's report: a summary, then per
// test its status, expectation, duration and subtests, and what it handed
// over (Result.Attachments: traces as flame charts with the samples its
// force_sample() calls forced marked, memory measurements, censuses, leak
// verdicts). Tests with unexpected results or attachments start open.
func (p *Page) AddWPT(run wpt.Run, exp wpt.Expectations) {
	v := &wptView{Tests: len(run.Results)}
	if !run.Start.IsZero() && !run.End.IsZero() {
		v.Duration = run.End.Sub(run.Start).Round(100 * time.Millisecond).String()
	}
	keys := make([]string, 0, len(run.Info))
	for k := range run.Info {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if run.Info[k] != nil {
			v.Info = append(v.Info, kv{k, fmt.Sprint(run.Info[k])})
		}
	}
	var longest time.Duration
	for _, r := range run.Results {
		longest = max(longest, r.Duration)
	}
	for _, r := range run.Results {
		x := exp.ForTest(r.Test)
		row := wptRow{Test: r.Test, Status: string(r.Status), Expected: string(x.Status),
			Unexpected: !x.Matches(r.Status), Message: r.Message,
			Duration: r.Duration.Round(time.Millisecond).String()}
		if longest > 0 {
			row.Bar = 100 * float64(r.Duration) / float64(longest)
		}
		for _, s := range r.Subtests {
			sx := exp.ForSubtest(r.Test, s.Name)
			sr := subRow{Name: s.Name, Status: string(s.Status), Expected: string(sx.Status), Message: s.Message,
				Unexpected: !sx.Matches(s.Status)}
			if sr.Unexpected {
				row.UnexpectedSubs++
			}
			if s.Status == wpt.StatusPass {
				row.Pass++
			}
			row.Subtests = append(row.Subtests, sr)
		}
		for i, a := range r.Attachments {
			name := a.Name
			if name == "" {
				name = fmt.Sprintf("%s %d", a.Kind, i+1)
			}
			row.Sections = append(row.Sections, attachmentSections(name, a, r.Forced)...)
		}
		v.Subtests += len(r.Subtests)
		v.SubPass += row.Pass
		v.UnexpectedSubs += row.UnexpectedSubs
		v.Attachments += len(r.Attachments)
		if row.Unexpected || row.UnexpectedSubs > 0 {
			v.UnexpectedTests++
		}
		row.Open = row.Unexpected || row.UnexpectedSubs > 0 || len(row.Sections) > 0
		v.Rows = append(v.Rows, row)
	}
	p.wpt = v
}

// attachmentSections draws one attachment; one that cannot be read is
// shown as JSON with the reason.
func attachmentSections(name string, a wpt.Attachment, forced []wpt.Span) []section {
	raw := func(err error) []section {
		s := string(a.Data)
		if b, e := json.MarshalIndent(json.RawMessage(a.Data), "", "  "); e == nil {
			s = string(b)
		}
		if len(s) > 8000 {
			s = s[:8000] + "\n…"
		}
		v := &rawView{Name: name + " (" + a.Kind + ")", JSON: s}
		if err != nil {
			v.Error = err.Error()
		}
		return []section{{Raw: v}}
	}
	switch a.Kind {
	case wpt.AttachTrace:
		t, ws, err := ParseTrace(a.Data)
		if err != nil {
			return raw(err)
		}
		// The test's forces, on the trace's clock.
		for _, f := range forced {
			ws = append(ws, Window{f.Start - a.TimeOrigin, f.End - a.TimeOrigin})
		}
		fl := buildFlame(TraceInput{Name: name, Trace: t, Forced: ws})
		return []section{{Flame: &fl}}
	case wpt.AttachMeasurement:
		m, err := parseMeasurement(a.Data)
		if err != nil {
			return raw(err)
		}
		v := buildMeasure(name, m)
		return []section{{Measure: &v}}
	case wpt.AttachCensus:
		cs, err := ParseCensus(a.Data)
		if err != nil {
			return raw(err)
		}
		var out []section
		for _, c := range cs {
			tm := buildTreemap(joinName(name, c.Name), c.Root)
			out = append(out, section{Treemap: &tm})
		}
		return out
	case wpt.AttachLeaks:
		rs, err := ParseLeaks(a.Data)
		if err != nil {
			return raw(err)
		}
		var out []section
		for _, r := range rs {
			v := buildLeaks(joinName(name, r.Name), r.Report)
			out = append(out, section{Leaks: &v})
		}
		return out
	}
	return raw(nil)
}
