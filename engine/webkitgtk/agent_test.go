package webkitgtk

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/wdext/wdext/polyfill"
)

func TestJSProfilingAllowed(t *testing.T) {
	for _, c := range []struct {
		values []string
		want   bool
	}{
		{nil, false},
		{[]string{"js-profiling"}, true},
		{[]string{"js-profiling=?1"}, true},
		{[]string{"js-profiling=?0"}, false},
		{[]string{"oversized-images=2.0, js-profiling"}, true},
		{[]string{"js-profiling;report-to=x"}, true},
		{[]string{"js-profilingx"}, false},
		{[]string{"a=1", "js-profiling"}, true},
		{[]string{"js-profiling", "js-profiling=?0"}, false},
	} {
		h := http.Header{}
		for _, v := range c.values {
			h.Add("Document-Policy", v)
		}
		if got := JSProfilingAllowed(h); got != c.want {
			t.Errorf("%q: %v, want %v", c.values, got, c.want)
		}
	}
}

func TestInjectPolicy(t *testing.T) {
	h := http.Header{"Document-Policy": {"js-profiling"}}
	got := string(InjectPolicy([]byte("<!doctype html><p>"), h))
	want := "<!doctype html><script>" + polyfill.SetPolicyScript(true) + "</script><p>"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestStopToken(t *testing.T) {
	msg := `{"message":{"source":"console-api","level":"debug","text":"wdext.profiler.stop","parameters":[{"type":"string","value":"wdext.profiler.stop"},{"type":"string","value":"abc:1"}]}}`
	if got := stopToken(json.RawMessage(msg)); got != "abc:1" {
		t.Errorf("stopToken = %q", got)
	}
	other := strings.Replace(msg, `"value":"wdext.profiler.stop"`, `"value":"hello"`, 1)
	if got := stopToken(json.RawMessage(other)); got != "" {
		t.Errorf("stopToken of another message = %q", got)
	}
}

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

func TestWorkerPolicy(t *testing.T) {
	a := &agent{policies: map[string]policy{
		"1": {url: "http://a:1/page.html", allowed: true},
		"2": {url: "http://b:2/x/page.html", allowed: false},
		"3": {url: "http://b:2/other.html", allowed: false},
		"4": {url: "http://c:3/", allowed: true},
		"5": {url: "http://c:3/np.html", allowed: false},
	}}
	a.response(json.RawMessage(`{"type":"Script","response":{"url":"http://a:1/w.js#x","headers":{"Document-Policy":"js-profiling"}}}`))
	a.response(json.RawMessage(`{"type":"Other","response":{"url":"http://a:1/n.js","headers":{}}}`))
	for _, c := range []struct {
		url            string
		allowed, known bool
	}{
		{"http://a:1/w.js", true, true},
		{"http://a:1/n.js", false, true},
		{"http://a:1/unseen.js", false, false},
		{"blob:http://a:1/1234-5678", true, true},
		{"blob:http://b:2/1234", false, true},
		{"blob:http://c:3/1234", false, false}, // the origin's frames disagree
		{"data:text/javascript,1", false, false},
	} {
		allowed, known := a.workerPolicy(c.url)
		if allowed != c.allowed || known != c.known {
			t.Errorf("%s: %v %v, want %v %v", c.url, allowed, known, c.allowed, c.known)
		}
	}
}
