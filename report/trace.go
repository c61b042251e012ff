package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Trace is the JS Self-Profiling spec's ProfilerTrace, as
// `await profiler.stop()` resolves with it and JSON.stringify writes it.
type Trace struct {
	Resources []string      `json:"resources"`
	Frames    []TraceFrame  `json:"frames"`
	Stacks    []TraceStack  `json:"stacks"`
	Samples   []TraceSample `json:"samples"`
}

// TraceFrame is a ProfilerFrame.
type TraceFrame struct {
	Name       string `json:"name"`
	ResourceID *int   `json:"resourceId,omitempty"`
	Line       *int   `json:"line,omitempty"`
	Column     *int   `json:"column,omitempty"`
}

// TraceStack is a ProfilerStack.
type TraceStack struct {
	ParentID *int `json:"parentId,omitempty"`
	FrameID  *int `json:"frameId"`
}

// TraceSample is a ProfilerSample.
type TraceSample struct {
	Timestamp float64 `json:"timestamp"`
	StackID   *int    `json:"stackId,omitempty"`
	Marker    string  `json:"marker,omitempty"`
}

// Window is a span of a trace's own time (its samples' timestamps, in
// milliseconds) during which one forced sample was taken: before and
// after a forcesample call, read from performance.now() in the
// profiler's realm, the clock the trace's timestamps come from. A single
// timestamp is a Window whose Start and End are equal.
type Window struct {
	Start, End float64
}

// Slack is how far outside a Window a sample may lie and still count as
// inside it: the rounding of converting epoch times (wdext wpt's) to the
// trace's time. Browsers coarsen the clock (100 µs in Chromium, 1 ms in
// WebKitGTK) but both the window and the samples are read from the same
// coarsened clock, which never goes back.
const Slack = 0.01

// TraceInput is one trace to draw.
type TraceInput struct {
	// Name titles the trace's panel (a file name, an attachment's name).
	Name  string
	Trace Trace
	// Forced are the spans in which a forced sample was taken: a trace
	// does not say which samples were forced (the spec's samples carry no
	// such mark), so whoever forced them says when (wdext wpt records
	// each test_driver.force_sample() call; `wdext report trace
	// --forced`).
	Forced []Window
}

// ParseTrace reads a trace saved as JSON: a ProfilerTrace, the same
// wrapped in a WebDriver answer ({"value": trace}), or an envelope
// {"trace": trace, "forced": [t, [start, end], ...]} whose forced spans
// are in the trace's time.
func ParseTrace(data []byte) (Trace, []Window, error) {
	data = unwrapValue(data)
	var env struct {
		Trace  *json.RawMessage  `json:"trace"`
		Forced []json.RawMessage `json:"forced"`
	}
	var forced []Window
	if err := json.Unmarshal(data, &env); err == nil && env.Trace != nil {
		data = *env.Trace
		for i, f := range env.Forced {
			w, err := parseWindow(f)
			if err != nil {
				return Trace{}, nil, fmt.Errorf("forced[%d]: %w", i, err)
			}
			forced = append(forced, w)
		}
	}
	var t Trace
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&t); err != nil {
		return Trace{}, nil, fmt.Errorf("not a ProfilerTrace: %w", jsonError(data, err))
	}
	if t.Samples == nil && t.Frames == nil && t.Stacks == nil && t.Resources == nil {
		return Trace{}, nil, errors.New("not a ProfilerTrace: none of resources, frames, stacks, samples")
	}
	if err := t.Validate(); err != nil {
		return Trace{}, nil, err
	}
	return t, forced, nil
}

func parseWindow(raw json.RawMessage) (Window, error) {
	var t float64
	if err := json.Unmarshal(raw, &t); err == nil {
		return Window{t, t}, nil
	}
	var pair []float64
	if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 || pair[1] < pair[0] {
		return Window{}, fmt.Errorf("%s is neither a timestamp nor [start, end]", raw)
	}
	return Window{pair[0], pair[1]}, nil
}

// ParseWindows reads a --forced list: timestamps and start-end spans in
// the trace's milliseconds, separated by commas ("12.5,40-41.2").
func ParseWindows(s string) ([]Window, error) {
	var ws []Window
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		a, b, span := strings.Cut(part, "-")
		if strings.HasPrefix(part, "-") { // a negative start is not a span
			return nil, fmt.Errorf("forced sample time %q: negative", part)
		}
		start, err := strconv.ParseFloat(strings.TrimSpace(a), 64)
		if err != nil || math.IsNaN(start) || math.IsInf(start, 0) {
			return nil, fmt.Errorf("forced sample time %q: not a number of milliseconds", part)
		}
		end := start
		if span {
			end, err = strconv.ParseFloat(strings.TrimSpace(b), 64)
			if err != nil || math.IsNaN(end) || math.IsInf(end, 0) || end < start {
				return nil, fmt.Errorf("forced sample span %q: want START-END, START ≤ END", part)
			}
		}
		ws = append(ws, Window{start, end})
	}
	return ws, nil
}

// Validate checks that every id points into its list and that stacks
// have no cycles, so that drawing never follows a bad id.
func (t *Trace) Validate() error {
	for i, f := range t.Frames {
		if f.ResourceID != nil && (*f.ResourceID < 0 || *f.ResourceID >= len(t.Resources)) {
			return fmt.Errorf("frames[%d].resourceId %d: there are %d resources", i, *f.ResourceID, len(t.Resources))
		}
	}
	for i, s := range t.Stacks {
		if s.FrameID == nil {
			return fmt.Errorf("stacks[%d] has no frameId", i)
		}
		if *s.FrameID < 0 || *s.FrameID >= len(t.Frames) {
			return fmt.Errorf("stacks[%d].frameId %d: there are %d frames", i, *s.FrameID, len(t.Frames))
		}
		if s.ParentID != nil && (*s.ParentID < 0 || *s.ParentID >= len(t.Stacks)) {
			return fmt.Errorf("stacks[%d].parentId %d: there are %d stacks", i, *s.ParentID, len(t.Stacks))
		}
	}
	// No cycles: from any stack, the root is at most len(stacks) parents
	// away. ok marks the stacks whose chain is known to end.
	ok := make([]bool, len(t.Stacks))
	for i := range t.Stacks {
		steps := 0
		for s := i; !ok[s]; s = *t.Stacks[s].ParentID {
			if steps++; steps > len(t.Stacks) {
				return fmt.Errorf("stacks[%d]: its parents make a cycle", i)
			}
			if t.Stacks[s].ParentID == nil {
				break
			}
		}
		for s := i; !ok[s]; s = *t.Stacks[s].ParentID {
			ok[s] = true
			if t.Stacks[s].ParentID == nil {
				break
			}
		}
	}
	for i, s := range t.Samples {
		if s.StackID != nil && (*s.StackID < 0 || *s.StackID >= len(t.Stacks)) {
			return fmt.Errorf("samples[%d].stackId %d: there are %d stacks", i, *s.StackID, len(t.Stacks))
		}
	}
	return nil
}

// chain is the stack ids from the outermost frame to stack id.
func (t *Trace) chain(id *int) []int {
	if id == nil {
		return nil
	}
	var c []int
	for s := id; s != nil && len(c) <= len(t.Stacks); s = t.Stacks[*s].ParentID {
		c = append(c, *s)
	}
	slices.Reverse(c)
	return c
}

func (t *Trace) url(f TraceFrame) string {
	if f.ResourceID == nil {
		return ""
	}
	return t.Resources[*f.ResourceID]
}
