package chromium

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/runtime"
	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/memory/heapsnapshot/heapsnapshottest"
	"github.com/wdext/wdext/wire"
)

func TestSamplingInterval(t *testing.T) {
	for _, tc := range []struct{ p, want float64 }{
		{0, 0}, {1, 1}, {0.05, 624}, {0.5, 46}, {0.999, 5}, {1e-12, maxInterval},
	} {
		assert.Equal(t, samplingInterval(tc.p), tc.want, "p=%v", tc.p)
	}
	// The mapping is what it says: a 32-byte object is sampled with
	// probability p.
	for _, p := range []float64{0.01, 0.1, 0.3, 0.7} {
		got := 1 - math.Exp(-referenceSize/samplingInterval(p))
		assert.Assert(t, math.Abs(got-p) < 0.01*p+0.01, "p=%v: %v", p, got)
	}
}

// objectSize never guesses: it recovers the size V8 reported, or says it
// cannot.
func TestObjectSize(t *testing.T) {
	for _, interval := range []float64{1, 624, 32768} {
		recovered := 0
		for s := int64(8); s <= 20000; s += 4 {
			reported := float64(s * v8Count(float64(s), interval))
			got, ok := objectSize(reported, interval)
			if ok {
				assert.Equal(t, got, s, "interval %v", interval)
				recovered++
			}
		}
		t.Logf("interval %v: %d of %d sizes recovered", interval, recovered, (20000-8)/4+1)
		if interval == 1 {
			assert.Equal(t, recovered, (20000-8)/4+1, "probability 1 gives every size exactly")
		}
	}
	// Measured on Chromium at interval 1000: 24- and 28-byte objects
	// both report 1008 bytes.
	_, ok := objectSize(1008, 1000)
	assert.Assert(t, !ok)
	_, ok = objectSize(0, 1)
	assert.Assert(t, !ok)
}

func TestLogEntries(t *testing.T) {
	vm := &heapprofiler.SamplingHeapProfileNode{ID: 2, CallFrame: &runtime.CallFrame{FunctionName: "(V8 API)", ScriptID: "0", LineNumber: -1, ColumnNumber: -1}}
	push := &heapprofiler.SamplingHeapProfileNode{ID: 5, CallFrame: &runtime.CallFrame{FunctionName: "push", ScriptID: "0", LineNumber: -1, ColumnNumber: -1}}
	deopt := &heapprofiler.SamplingHeapProfileNode{ID: 6, CallFrame: &runtime.CallFrame{FunctionName: "(deopt)", ScriptID: "0", LineNumber: -1, ColumnNumber: -1}}
	make := &heapprofiler.SamplingHeapProfileNode{ID: 4, CallFrame: frame("makeThings", "http://x/things.js", 12, 19),
		Children: []*heapprofiler.SamplingHeapProfileNode{push, deopt}}
	top := &heapprofiler.SamplingHeapProfileNode{ID: 3, CallFrame: frame("", "", 0, 0), Children: []*heapprofiler.SamplingHeapProfileNode{make}}
	p := &heapprofiler.SamplingHeapProfile{
		Head: &heapprofiler.SamplingHeapProfileNode{ID: 1, CallFrame: &runtime.CallFrame{FunctionName: "(root)", ScriptID: "0", LineNumber: -1, ColumnNumber: -1},
			Children: []*heapprofiler.SamplingHeapProfileNode{vm, top}},
		Samples: []*heapprofiler.SamplingHeapProfileSample{
			{Size: 28, NodeID: 4, Ordinal: 3},
			{Size: 16, NodeID: 2, Ordinal: 1},
			{Size: 40, NodeID: 5, Ordinal: 4},
			{Size: 20, NodeID: 6, Ordinal: 5},
			{Size: 12, NodeID: 3, Ordinal: 2},
		},
	}
	log := logEntries(p, 1)
	assert.Equal(t, len(log), 5)
	names := func(e wire.AllocationEntry) []string {
		var out []string
		for _, f := range e.Stack {
			out = append(out, f.FunctionDisplayName)
		}
		return out
	}
	// In ordinal order; VM states and (deopt) are no frames; builtins are.
	assert.Assert(t, log[0].Frame == nil && len(log[0].Stack) == 0)
	assert.DeepEqual(t, names(log[1]), []string{""})
	assert.DeepEqual(t, names(log[2]), []string{"makeThings", ""})
	assert.DeepEqual(t, names(log[3]), []string{"push", "makeThings", ""})
	assert.DeepEqual(t, names(log[4]), []string{"makeThings", ""})
	assert.DeepEqual(t, *log[2].Frame, wire.Frame{FunctionDisplayName: "makeThings", Source: "http://x/things.js", SourceID: 7, Line: 13, Column: 20})
	assert.Equal(t, *log[2].Size, int64(28))
	assert.Equal(t, log[2].SampledBytes, int64(28))
	assert.Assert(t, log[2].Timestamp == nil && log[2].Class == nil && log[2].Constructor == nil && log[2].InNursery == nil)
	assert.Assert(t, logEntries(nil, 1) == nil)
}

// readTrace feeds a recorded trace (Chromium 156, disabled-by-default-v8.gc,
// filtered to the events the parser reads and a few it skips) to p, split
// in two flushes at the given line.
func readTrace(t *testing.T, p *gcParser, split int) (first, second []wire.GCEntry) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "debuggermemory", "gc-trace.jsonl"))
	assert.NilError(t, err)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		if n == split {
			first = p.finish()
		}
		p.add(bytes.Clone(sc.Bytes()))
		n++
	}
	assert.NilError(t, sc.Err())
	second = p.finish()
	return first, second
}

func TestGCParser(t *testing.T) {
	var p gcParser
	_, entries := readTrace(t, &p, -1)
	var scavenges, major, incremental, labelled int
	seen := map[threadKey]int64{}
	for _, e := range entries {
		th := threadKey{e.Pid, e.Tid}
		assert.Assert(t, e.GCCycleNumber > seen[th], "cycle numbers increase per isolate")
		seen[th] = e.GCCycleNumber
		if e.Process == "Renderer" && e.Thread == "CrRendererMain" {
			labelled++
		}
		switch e.Collector {
		case "scavenger":
			scavenges++
			assert.Equal(t, len(e.Collections), 1)
			assert.Assert(t, e.NonincrementalReason == nil)
		case "mark-compactor":
			major++
			assert.Equal(t, *e.Reason, "low memory notification")
			if len(e.Collections) > 1 {
				incremental++
				assert.Assert(t, e.NonincrementalReason == nil, "an incremental GC")
				// Steps come before the final pause, in order.
				for i := 1; i < len(e.Collections); i++ {
					assert.Assert(t, e.Collections[i].StartTimestamp >= e.Collections[i-1].EndTimestamp)
				}
			} else {
				assert.Equal(t, *e.NonincrementalReason, "GC in old space requested")
			}
			assert.Assert(t, *e.HeapBytesBefore >= *e.HeapBytesAfter)
		}
		for _, c := range e.Collections {
			assert.Assert(t, c.EndTimestamp >= c.StartTimestamp && c.StartTimestamp > 1e6)
		}
	}
	assert.Equal(t, scavenges, 17)
	assert.Equal(t, major, 3)
	assert.Equal(t, incremental, 1)
	assert.Equal(t, labelled, 16)
	// The WebUI renderer's last scavenge ended as tracing stopped, before
	// V8 wrote its summary: no reason.
	last := entries[len(entries)-1]
	for _, e := range entries {
		if e.Process == "WebUI Top Renderer" {
			last = e
		}
	}
	assert.Assert(t, last.Reason == nil, "%+v", last)

	// Split in two flushes inside the incremental cycle: the steps wait
	// for the final pause, and nothing is reported twice.
	var q gcParser
	first, second := readTrace(t, &q, 120)
	assert.Equal(t, len(first)+len(second), len(entries))
	for _, e := range append(first, second...) {
		if e.Collector == "mark-compactor" && len(e.Collections) > 1 {
			assert.Equal(t, len(e.Collections), incrementalSlices(entries))
		}
	}
}

// Live objects: only what has an allocation trace, grouped by stack and
// class, largest first.
func TestGroupLive(t *testing.T) {
	var buf bytes.Buffer
	assert.NilError(t, heapsnapshottest.Write(&buf, heapsnapshottest.Options{Objects: 20, Traces: true}))
	snap, err := heapsnapshot.Read(&buf)
	assert.NilError(t, err)
	live := groupLive(snap)
	got := map[string]int64{}
	for _, g := range live.LiveObjects {
		var stack []string
		for _, f := range g.CreatedFrom {
			stack = append(stack, f.FunctionDisplayName)
		}
		got[g.Class+" @ "+strings.Join(stack, "<")] = g.Count
	}
	// Objects k = 0..19 of classes Object, Foo, Bar, Array in turn; every
	// tenth (k = 9, 19: a Foo and an Array) has no trace; strings come
	// from main; backing stores and numbers have no trace.
	assert.DeepEqual(t, got, map[string]int64{
		"Object @ makeObject<main": 5,
		"Foo @ makeFoo<main":       4,
		"Bar @ makeBar<main":       5,
		"Array @ makeArray<main":   4,
		"(string) @ main":          20,
	})
	assert.Equal(t, live.Count, int64(38))
	for i := 1; i < len(live.LiveObjects); i++ {
		assert.Assert(t, live.LiveObjects[i-1].InstanceSize >= live.LiveObjects[i].InstanceSize)
	}
	// A snapshot taken without tracking has no live objects to report.
	buf.Reset()
	assert.NilError(t, heapsnapshottest.Write(&buf, heapsnapshottest.Options{Objects: 20}))
	snap, err = heapsnapshot.Read(&buf)
	assert.NilError(t, err)
	assert.Equal(t, len(groupLive(snap).LiveObjects), 0)
}

func frame(name, url string, line, col int64) *runtime.CallFrame {
	return &runtime.CallFrame{FunctionName: name, URL: url, ScriptID: "7", LineNumber: line, ColumnNumber: col}
}

func incrementalSlices(entries []wire.GCEntry) int {
	for _, e := range entries {
		if e.Collector == "mark-compactor" && len(e.Collections) > 1 {
			return len(e.Collections)
		}
	}
	return 0
}
