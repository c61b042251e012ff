package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/wire"
	"github.com/wdext/wdext/wpt"
)

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	assert.NilError(t, err)
	return b
}

func render(t *testing.T, p *Page) string {
	t.Helper()
	var buf bytes.Buffer
	assert.NilError(t, p.Write(&buf))
	return buf.String()
}

func TestParseTraceErrors(t *testing.T) {
	for _, c := range []struct{ in, err string }{
		{`nope`, "not a ProfilerTrace: line 1"},
		{`{}`, "none of resources, frames, stacks, samples"},
		{`[]`, "not a ProfilerTrace"},
		{`{"frames":[{"name":"a","resourceId":2}],"resources":["x"]}`, "frames[0].resourceId 2: there are 1 resources"},
		{`{"frames":[{"name":"a"}],"stacks":[{"frameId":1}]}`, "stacks[0].frameId 1: there are 1 frames"},
		{`{"frames":[{"name":"a"}],"stacks":[{}]}`, "stacks[0] has no frameId"},
		{`{"frames":[{"name":"a"}],"stacks":[{"frameId":0,"parentId":5}]}`, "stacks[0].parentId 5"},
		{`{"frames":[{"name":"a"}],"stacks":[{"frameId":0,"parentId":1},{"frameId":0,"parentId":0}]}`, "its parents make a cycle"},
		{`{"frames":[{"name":"a"}],"stacks":[{"frameId":0,"parentId":0}]}`, "its parents make a cycle"},
		{`{"samples":[{"timestamp":1,"stackId":0}]}`, "samples[0].stackId 0: there are 0 stacks"},
		{`{"samples":[{"timestamp":"x"}]}`, "samples.timestamp: string where float64 belongs"},
		{`{"trace":{"samples":[]},"forced":["x"]}`, `forced[0]: "x" is neither`},
		{`{"trace":{"samples":[]},"forced":[[3,1]]}`, `forced[0]: [3,1] is neither`},
	} {
		_, _, err := ParseTrace([]byte(c.in))
		assert.ErrorContains(t, err, c.err, c.in)
	}
}

func TestParseTraceEnvelopes(t *testing.T) {
	tr := string(testdata(t, "trace.json"))
	for _, in := range []string{tr, `{"value":` + tr + `}`, `{"trace":` + tr + `,"forced":[140,[169.5,170.5]]}`} {
		got, forced, err := ParseTrace([]byte(in))
		assert.NilError(t, err)
		assert.Equal(t, len(got.Samples), 8)
		if strings.Contains(in, "forced") {
			assert.DeepEqual(t, forced, []Window{{140, 140}, {169.5, 170.5}})
		}
	}
}

func TestParseWindows(t *testing.T) {
	ws, err := ParseWindows(" 12.5, 40-41.25 ,")
	assert.NilError(t, err)
	assert.DeepEqual(t, ws, []Window{{12.5, 12.5}, {40, 41.25}})
	for _, bad := range []string{"x", "3-1", "-2", "1-x", "NaN"} {
		_, err := ParseWindows(bad)
		assert.Assert(t, err != nil, bad)
	}
}

// The known trace's boxes: main twice (the stack-less samples at 140 and
// 170 end it), every other frame once, at the right times and depths.
func TestFlameLayout(t *testing.T) {
	tr, _, err := ParseTrace(testdata(t, "trace.json"))
	assert.NilError(t, err)
	f := buildFlame(TraceInput{Name: "t", Trace: tr, Forced: []Window{{139.9, 140.1}, {165, 175}}})
	type b struct {
		Frame, Depth int
		From, To     float64
	}
	var got []b
	scale := chartWidth / 80 // 100 ms to 170 ms plus the median gap, 10 ms
	for _, x := range f.Boxes {
		got = append(got, b{x.Frame, int(math.Round((x.Y - laneHeight - axisHeight) / rowHeight)),
			math.Round(100 + x.X/scale), math.Round(100 + (x.X+x.W)/scale)})
	}
	assert.DeepEqual(t, got, []b{
		{0, 0, 100, 140}, {0, 0, 150, 170},
		{1, 1, 110, 140}, {4, 1, 150, 170},
		{2, 2, 110, 130}, {3, 2, 130, 140}, {5, 2, 150, 160},
	})
	assert.Equal(t, f.NForced, 2)
	assert.Equal(t, f.NoStack, 2)
	assert.Equal(t, len(f.Spans), 2)
	assert.Equal(t, f.Functions[0].Name, "main")
	assert.Equal(t, f.Functions[0].Total, 6)
}

// A window holding two samples marks both as maybe forced; one alone is
// forced; the clock's rounding is allowed for, no more.
func TestClassifyForced(t *testing.T) {
	s := func(ts ...float64) []TraceSample {
		var out []TraceSample
		for _, v := range ts {
			out = append(out, TraceSample{Timestamp: v})
		}
		return out
	}
	got := classifyForced(s(10, 20, 21, 30, 40), []Window{{19.995, 22}, {29.5, 30.5}, {39.9, 39.98}})
	assert.DeepEqual(t, got, []int{sampleOther, sampleMaybeForced, sampleMaybeForced, sampleForced, sampleOther})
}

func TestCensusTree(t *testing.T) {
	cs, err := ParseCensus(testdata(t, "census-before.json"))
	assert.NilError(t, err)
	assert.Equal(t, len(cs), 1)
	root := cs[0].Root
	assert.Equal(t, root.Count, int64(36242))
	assert.Equal(t, root.Bytes, int64(1586640))
	assert.Equal(t, root.leaves()[0].Path, "other › array")
	tm := buildTreemap("c", root)
	// Every cell is inside the map; leaves do not overlap.
	var leaves []cell
	for _, c := range tm.Cells {
		assert.Assert(t, c.X >= -0.01 && c.Y >= -0.01 && c.X+c.W <= mapWidth+0.01 && c.Y+c.H <= mapHeight+0.01, "%+v", c)
		if !c.Group {
			leaves = append(leaves, c)
		}
	}
	for i, a := range leaves {
		for _, b := range leaves[i+1:] {
			ox := math.Min(a.X+a.W, b.X+b.W) - math.Max(a.X, b.X)
			oy := math.Min(a.Y+a.H, b.Y+b.H) - math.Max(a.Y, b.Y)
			assert.Assert(t, ox <= 0.01 || oy <= 0.01, "%s overlaps %s", a.Name, b.Name)
		}
	}
}

func TestCensusShapes(t *testing.T) {
	// objectClass only, a class named "count", a list, allocation stacks,
	// targets "all", a WebDriver answer.
	for _, c := range []struct {
		in     string
		names  []string
		leaves int
	}{
		{`{"Foo":{"count":3,"bytes":48},"count":{"count":1,"bytes":16}}`, []string{""}, 2},
		{`{"value":{"count":5,"bytes":80}}`, []string{""}, 0},
		{`[{"count":1,"bytes":2},{"objects":{"count":1,"bytes":2}}]`, []string{""}, 2},
		{`[{"stack":[{"functionDisplayName":"make","source":"a.js","line":3}],"census":{"count":1,"bytes":8}},{"stack":null,"noStack":true,"census":{"count":2,"bytes":8}}]`, []string{""}, 2},
		{`{"targets":[{"type":"page","url":"http://a/","census":{"Foo":{"count":1,"bytes":1}}},{"type":"worker","url":"w.js","census":null,"error":"gone"}]}`, []string{"page http://a/"}, 1},
	} {
		cs, err := ParseCensus([]byte(c.in))
		assert.NilError(t, err, c.in)
		var names []string
		for _, x := range cs {
			names = append(names, x.Name)
		}
		assert.DeepEqual(t, names, c.names)
		assert.Equal(t, len(cs[0].Root.leaves()), c.leaves, c.in)
	}
	cs, err := ParseCensus([]byte(`[{"stack":[{"functionDisplayName":"make","source":"a.js","line":3}],"census":{"count":1,"bytes":8}}]`))
	assert.NilError(t, err)
	assert.Equal(t, cs[0].Root.Children[0].Name, "make (a.js:3)")
}

func TestCensusErrors(t *testing.T) {
	for _, c := range []struct{ in, err string }{
		{`{"Foo": 3}`, "census.Foo: a number where a census has"},
		{`{"Foo": {"count": -1, "bytes": 2}}`, "census.Foo.count: -1 is not a count"},
		{`{"Foo": {"count": 1.5}}`, "census.Foo.count: 1.5 is not a count"},
		{`{"objects": {"Foo": "x"}}`, "census.objects.Foo: a string"},
		{`"census"`, "census: a string"},
		{`{"targets":[{"type":"page","census":null}]}`, "no target has a census"},
		{`{`, "not a census"},
	} {
		_, err := ParseCensus([]byte(c.in))
		assert.ErrorContains(t, err, c.err, c.in)
	}
}

func TestCensusDiff(t *testing.T) {
	b, err := ParseCensus(testdata(t, "census-before.json"))
	assert.NilError(t, err)
	a, err := ParseCensus(testdata(t, "census-after.json"))
	assert.NilError(t, err)
	d := buildDiff("d", b[0].Root, a[0].Root)
	var paths []string
	for _, r := range d.Rows {
		paths = append(paths, r.Path+" "+r.Bytes)
	}
	assert.DeepEqual(t, paths, []string{"objects › Leaky +39 KiB", "strings +31 KiB", "other › array +29 KiB",
		"objects › Foo +16 KiB", "objects › Array -3.1 KiB", "objects › HTMLDivElement +3.1 KiB"})
	assert.Assert(t, d.Grew)
}

func TestLeaks(t *testing.T) {
	rs, err := ParseLeaks(testdata(t, "leaks.json"))
	assert.NilError(t, err)
	assert.Equal(t, len(rs), 1)
	v := buildLeaks("l", rs[0].Report)
	assert.Equal(t, len(v.Groups), 4)
	assert.DeepEqual(t, v.Groups[0].Path, []pathStep{
		{Node: "Window", Edge: "store (property)", Root: true},
		{Node: "Array", Edge: "[29] (element)"},
		{Node: "Foo", Leak: true},
	})
	assert.Equal(t, v.Groups[0].CreatedAt, "http://localhost:8000/leaks.js:19:18")
	assert.Assert(t, v.Groups[3].NoPath)
	for _, bad := range []string{`{}`, `[]`, `{"leaks": 3}`, `x`, `{"targets": 3}`, `{"targets": [{"type": "page", "report": null, "error": "gone"}]}`} {
		_, err := ParseLeaks([]byte(bad))
		assert.ErrorContains(t, err, "not a leak report", bad)
	}
	// A check of "targets": "all": a verdict per target that has one.
	all, err := ParseLeaks([]byte(`{"value": {"iterations": 2, "targets": [
		{"type": "page", "url": "http://a/", "report": {"iterations": 2, "leaks": []}},
		{"type": "iframe", "url": "http://b/f.html", "report": null, "error": "gone"},
		{"type": "worker", "url": "http://a/w.js", "report": {"iterations": 2, "leaks": [{"kind": "objects", "name": "W", "countDelta": 2, "perIteration": 1}]}}]}}`))
	assert.NilError(t, err)
	assert.Equal(t, len(all), 2)
	assert.Equal(t, all[0].Name, "page http://a/")
	assert.Equal(t, all[1].Name, "worker http://a/w.js")
	assert.Equal(t, all[1].Report.Leaks[0].Name, "W")
	html := render(t, &Page{sections: []section{{Leaks: &v}}})
	assert.Assert(t, strings.Contains(html, `Held by their event target`))
}

// What pages name (function names, URLs, classes, messages) is escaped,
// and the report loads nothing.
func TestEscapingAndSelfContained(t *testing.T) {
	evil := `</script><img src=x onerror=alert(1)>"'&`
	tr := Trace{Resources: []string{evil}, Frames: []TraceFrame{{Name: evil, ResourceID: new(int)}},
		Stacks: []TraceStack{{FrameID: new(int)}}, Samples: []TraceSample{{Timestamp: 1, StackID: new(int)}, {Timestamp: 2}}}
	var p Page
	p.Title = evil
	p.AddTraces(TraceInput{Name: evil, Trace: tr})
	cs, err := ParseCensus([]byte(`{"` + strings.ReplaceAll(evil, `"`, `\"`) + `":{"count":1,"bytes":10}}`))
	assert.NilError(t, err)
	p.AddCensus(evil, cs...)
	p.AddLeaks(evil, NamedLeaks{Name: evil, Report: wire.LeakReport{Leaks: []wire.Leak{{Kind: evil, Name: evil, RetainerPath: []string{evil, evil, evil}, CreatedFrom: &wire.LeakFrame{FunctionName: evil, URL: evil}}}}})
	html := render(t, &p)
	assert.Assert(t, !strings.Contains(html, "<img"), "unescaped")
	assert.Equal(t, strings.Count(html, "</script>"), 1)
	// Nothing to fetch: no element that loads, and the policy forbids it
	// anyway.
	assert.Assert(t, !regexp.MustCompile(`(?i)<(img|link|iframe|object|embed|image|use|audio|video|source|script\s+src)\b`).MatchString(html))
	assert.Assert(t, strings.Contains(html, `content="default-src 'none';`))
}

// Big inputs stay bounded: boxes too narrow are counted, not drawn;
// small classes are lumped; tables are cut.
func TestBounded(t *testing.T) {
	var tr Trace
	tr.Resources = []string{"a.js"}
	for i := 0; i < 50; i++ {
		tr.Frames = append(tr.Frames, TraceFrame{Name: "f" + string(rune('a'+i%26)), ResourceID: new(int)})
	}
	for i := 0; i < 50; i++ {
		st := TraceStack{FrameID: ptr(i)}
		if i > 0 {
			st.ParentID = ptr(i - 1)
		}
		tr.Stacks = append(tr.Stacks, st)
	}
	for i := 0; i < 20000; i++ {
		tr.Samples = append(tr.Samples, TraceSample{Timestamp: float64(i), StackID: ptr(i % 50)})
	}
	f := buildFlame(TraceInput{Trace: tr})
	assert.Assert(t, f.Hidden > 0)
	assert.Assert(t, len(f.Boxes) < 60000)

	census := map[string]any{}
	for i := 0; i < 5000; i++ {
		census["Class"+strings.Repeat("x", i%7)+string(rune('A'+i%26))+strconv.Itoa(i)] = map[string]int{"count": 1, "bytes": 10 + i}
	}
	b, _ := json.Marshal(map[string]any{"objects": census})
	cs, err := ParseCensus(b)
	assert.NilError(t, err)
	tm := buildTreemap("big", cs[0].Root)
	assert.Equal(t, len(tm.Rows), tableLimit)
	assert.Equal(t, tm.MoreRows, 5000-tableLimit)
	assert.Assert(t, len(tm.Cells) < 2600, len(tm.Cells))
}

func ptr(i int) *int { return &i }

func TestWPTAttachments(t *testing.T) {
	tr := testdata(t, "trace.json")
	leaks := testdata(t, "leaks.json")
	census := testdata(t, "census-before.json")
	origin := 1.7e12
	run := wpt.Run{Start: time.Unix(100, 0), End: time.Unix(103, 0), Info: map[string]any{"product": "chrome"}, Results: []wpt.Result{{
		Test: "/a.html", Status: wpt.StatusOK, Duration: time.Second,
		Subtests: []wpt.SubtestResult{{Name: "s", Status: wpt.StatusFail, Message: "boom"}},
		Attachments: []wpt.Attachment{
			{Kind: wpt.AttachTrace, Name: "t", Data: tr, TimeOrigin: origin},
			{Kind: wpt.AttachLeaks, Data: leaks},
			{Kind: wpt.AttachCensus, Name: "c", Data: census},
			{Kind: wpt.AttachMeasurement, Name: "m", Data: json.RawMessage(`{"bytes":10,"breakdown":[{"bytes":10,"attribution":[{"url":"http://a/","scope":"Window"}],"types":["JavaScript"]}]}`)},
			{Kind: wpt.AttachTrace, Name: "bad", Data: json.RawMessage(`{"samples":[{"timestamp":1,"stackId":9}]}`)},
			{Kind: "note", Name: "n", Data: json.RawMessage(`{"x":1}`)},
		},
		Forced: []wpt.Span{{Start: origin + 139.9, End: origin + 140.2}},
	}, {Test: "/b.html", Status: wpt.StatusTimeout, Duration: 2 * time.Second}}}
	var p Page
	p.AddWPT(run, wpt.Expectations{"/b.html": {Status: wpt.Expected{Status: wpt.StatusTimeout}}})
	v := p.wpt
	assert.Equal(t, v.Tests, 2)
	assert.Equal(t, v.UnexpectedTests, 1)
	assert.Equal(t, v.UnexpectedSubs, 1)
	assert.Equal(t, v.Attachments, 6)
	row := v.Rows[0]
	assert.Equal(t, len(row.Sections), 6)
	assert.Equal(t, row.Sections[0].Flame.NForced, 1)
	assert.Assert(t, row.Sections[1].Leaks != nil && row.Sections[1].Leaks.Name == "leaks 2")
	assert.Assert(t, row.Sections[2].Treemap != nil)
	assert.Assert(t, row.Sections[3].Measure != nil)
	assert.Assert(t, strings.Contains(row.Sections[4].Raw.Error, "samples[0].stackId 9"))
	assert.Assert(t, row.Sections[5].Raw != nil)
	assert.Assert(t, row.Open && !v.Rows[1].Open)
	html := render(t, &p)
	assert.Assert(t, strings.Contains(html, `data-test="/b.html"`))
}

func FuzzParseAndDraw(f *testing.F) {
	f.Add([]byte(`{"frames":[{"name":"a"}],"stacks":[{"frameId":0},{"frameId":0,"parentId":0}],"samples":[{"timestamp":1,"stackId":1},{"timestamp":1}]}`))
	f.Add([]byte(`{"objects":{"Foo":{"count":1,"bytes":2}},"other":{}}`))
	f.Add([]byte(`{"iterations":1,"leaks":[{"kind":"objects","retainerPath":["a","b"]}]}`))
	f.Add([]byte(`{"bytes":10,"breakdown":[{"bytes":10,"attribution":[{"url":"http://a/","scope":"Window"}],"types":["JavaScript"]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p Page
		if tr, ws, err := ParseTrace(data); err == nil {
			p.AddTraces(TraceInput{Trace: tr, Forced: ws})
		}
		if cs, err := ParseCensus(data); err == nil {
			p.AddCensus("c", cs...)
			p.AddCensusDiff("d", cs[0].Root, cs[0].Root)
		}
		if rs, err := ParseLeaks(data); err == nil {
			p.AddLeaks("l", rs...)
		}
		// A measurement reaches a page only as a wpt attachment.
		p.sections = append(p.sections, attachmentSections("m", wpt.Attachment{Kind: wpt.AttachMeasurement, Data: data}, nil)...)
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			t.Fatal(err)
		}
	})
}
