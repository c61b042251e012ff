package forcetrace

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wdext/wdext/engine"
)

// ForceReport is what the trace of one armed window of a force shows (a
// force arms once per page whose isolates it samples).
type ForceReport struct {
	// Isolates is the number of V8 isolates sampled (one trigger each).
	Isolates int
	// Window is how long the browser traced: Tracing.start sent to
	// tracingComplete received.
	Window time.Duration
	// Held is how long the isolates' main threads were paused: the first
	// pause asked for to the last resume; 0 but in a force's last window.
	Held time.Duration
	// Samples is the number of triggers the trace shows. A paused
	// thread's last events may be missing from the trace (they are
	// sampled all the same), so it may be below Isolates.
	Samples int
	// Strays are the other sampling events the trace shows on the main
	// threads of the sampled isolates ("FunctionCall tick
	// http://…/page.js"): samples that were not the force's.
	Strays []string
	// Verified is false when the trace was not read whole (data loss, a
	// stream that could not be read or decoded).
	Verified bool
}

// Observe makes each Chromium session that *bind binds from now on talk
// to its browser through a Proxy, which reports every force there to f
// until stop is called (the proxies stay until the test ends).
func Observe(t testing.TB, bind *engine.Binder, f func(ForceReport)) (stop func()) {
	var on atomic.Bool
	on.Store(true)
	report := func(r ForceReport) {
		if on.Load() {
			f(r)
		}
	}
	var mu sync.Mutex
	var proxies []*Proxy
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range proxies {
			p.Close()
		}
	})
	inner := *bind
	*bind = func(ctx context.Context, s engine.NewSession) (engine.Engine, error) {
		caps := withAddress(s.Capabilities, func(addr string) string {
			p := newProxy(addr, report)
			mu.Lock()
			proxies = append(proxies, p)
			mu.Unlock()
			return p.Addr()
		})
		if caps != nil {
			s.Capabilities = caps
		}
		return inner(ctx, s)
	}
	return func() { on.Store(false) }
}

// withAddress is a copy of a new-session reply's capabilities whose CDP
// endpoint (goog:chromeOptions.debuggerAddress, or another vendor's) is
// to(the endpoint); nil if there is none.
func withAddress(caps map[string]any, to func(string) string) map[string]any {
	for k, v := range caps {
		opts, ok := v.(map[string]any)
		if !ok || !strings.HasSuffix(k, ":chromeOptions") {
			continue
		}
		if a, ok := opts["debuggerAddress"].(string); ok && a != "" {
			c, o := maps.Clone(caps), maps.Clone(opts)
			o["debuggerAddress"] = to(a)
			c[k] = o
			return c
		}
	}
	return nil
}

// holdScript begins the script a force pauses an isolate in, trigger the
// one that samples it.
const (
	holdScript = "debugger\n//# sourceURL=wdext-forcesample-hold"
	trigger    = "console.timeStamp("
)

// tracker follows the forces on one connection: the pauses, the armed
// window (a Tracing.start of devtools.timeline) and its triggers, the
// resumes.
type tracker struct {
	report func(ForceReport)

	mu        sync.Mutex
	held      time.Time // the first pause of the force under way
	armed     *window   // the window under way
	completed *window   // the last one complete, whose isolates resume
}

// window is a force's armed window.
type window struct {
	start, held, resumed time.Time
	took                 time.Duration
	labels               []string
}

// command notes a command of the engine's.
func (f *tracker) command(method string, params json.RawMessage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	switch method {
	case "Runtime.evaluate":
		var p struct {
			Expression string `json:"expression"`
		}
		_ = json.Unmarshal(params, &p)
		switch {
		case strings.HasPrefix(p.Expression, holdScript) && f.held.IsZero():
			f.held = now
		case strings.HasPrefix(p.Expression, trigger) && f.armed != nil:
			var label string
			_ = json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(p.Expression, trigger), ")")), &label)
			f.armed.labels = append(f.armed.labels, label)
		}
	case "Tracing.start":
		var p struct {
			PerfettoConfig []byte `json:"perfettoConfig"` // base64
		}
		if json.Unmarshal(params, &p) == nil && bytes.Contains(p.PerfettoConfig, []byte(`"devtools.timeline"`)) {
			f.armed = &window{start: now, held: f.held} // the force's pause, for each of its windows
		}
	case "Debugger.resume":
		if f.completed != nil {
			f.completed.resumed = now
		}
		f.held = time.Time{}
	}
}

// complete ends the window under way, if any, at a tracingComplete: it
// returns the window, its trace's stream, and whether data was lost.
func (f *tracker) complete(params json.RawMessage) (w *window, stream string, loss bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.armed == nil {
		return nil, "", false // a warm-up's, or another client's
	}
	w, f.armed = f.armed, nil
	w.took = time.Since(w.start)
	f.completed = w
	var c struct {
		DataLossOccurred bool   `json:"dataLossOccurred"`
		Stream           string `json:"stream"`
	}
	if json.Unmarshal(params, &c) != nil {
		return w, "", true
	}
	return w, c.Stream, c.DataLossOccurred
}

// done reports a window once its trace is read (err: it could not be).
func (f *tracker) done(w *window, trace []byte, loss bool, err error) {
	var tr *windowTrace
	if err == nil {
		tr, err = readTrace(trace)
	}
	f.mu.Lock()
	if f.completed == w {
		f.completed = nil
	}
	r := ForceReport{Isolates: len(w.labels), Window: w.took, Verified: !loss && err == nil}
	if !w.held.IsZero() && w.resumed.After(w.held) {
		r.Held = w.resumed.Sub(w.held)
	}
	f.mu.Unlock()
	if tr != nil {
		for _, label := range w.labels {
			if th, ok := tr.hits[label]; ok {
				r.Samples++
				r.Strays = append(r.Strays, tr.sampling[th]...)
			}
		}
	}
	sort.Strings(r.Strays)
	f.report(r)
}
