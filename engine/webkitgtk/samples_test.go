package webkitgtk

import (
	"testing"

	"github.com/wdext/wdext/polyfill"
)

// JavaScriptCore's samples: innermost frame first, some with timestamp 0
// (spread between the known times around them), frames of scripts
// without a URL left out, named host functions kept without a script.
func TestToBatch(t *testing.T) {
	var done trackingComplete
	done.Timestamp = 2.0
	frames := []stackFrame{
		{Name: "now", Line: -1, Column: -1, SourceID: "4294967295"},
		{Name: "spin", Line: 5, Column: 14, URL: "http://a/busy.js"},
		{Name: "", Line: 1, Column: 18, SourceID: "2"},
		{Name: "Promise", Line: 1, Column: 11, SourceID: "4"},
	}
	for _, ts := range []float64{0, 0, 0, 1.5, 0} {
		done.Samples.StackTraces = append(done.Samples.StackTraces, struct {
			Timestamp   float64      `json:"timestamp"`
			StackFrames []stackFrame `json:"stackFrames"`
		}{ts, frames})
	}
	b := toBatch(done, 1.1, 1000)
	wantFrames := []polyfill.Frame{{Name: "spin", URL: "http://a/busy.js", Line: 5, Column: 14}, {Name: "now"}}
	if len(b.Frames) != 2 || b.Frames[0] != wantFrames[0] || b.Frames[1] != wantFrames[1] {
		t.Fatalf("frames %+v, want %+v", b.Frames, wantFrames)
	}
	wantTimes := []float64{2200, 2300, 2400, 2500, 2750}
	for i, s := range b.Samples {
		if got := s[0].(float64); got < wantTimes[i]-1e-6 || got > wantTimes[i]+1e-6 {
			t.Errorf("sample %d at %v, want %v", i, got, wantTimes[i])
		}
		if ids := s[1].([]int); len(ids) != 2 || ids[0] != 0 || ids[1] != 1 {
			t.Errorf("sample %d: stack %v, want [0 1] (outermost first)", i, ids)
		}
	}
}
