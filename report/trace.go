package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
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

// Flame chart geometry, in SVG user units.
const (
	chartWidth = 1200.0
	laneHeight = 26.0 // the samples lane
	axisHeight = 18.0
	rowHeight  = 17.0
	maxRows    = 80
	minBoxPx   = 0.25 // narrower boxes are not drawn (the table counts them)
	charPx     = 6.3  // average width of a character of the 11px labels
	edgePx     = 3.0  // room at both ends, for the first and last sample's marks
)

// flame is what the trace template draws.
type flame struct {
	Name      string
	Height    float64
	Boxes     []box
	Ticks     []axisTick
	Samples   string    // the path of the samples lane's ticks
	Forced    []float64 // x of each forced sample
	Maybe     []float64 // x of samples that share a force's span with others
	Spans     []span    // the forces' spans
	NForced   int
	NForces   int
	NSamples  int
	NoStack   int
	Span      string // the trace's duration
	Hidden    int    // boxes too narrow or deep to draw
	FramesRef string // JSON: [[name, url, line, column], ...] for the tooltip
	Functions []fnRow
	MoreFns   int
	Empty     bool
	Markers   bool // some samples carry a spec marker
	Legend    []legendItem
}

type box struct {
	X, Y, W    float64
	Frame      int
	Fill       string
	Label      string
	Ms, Sample string
}

type span struct{ X, W float64 }

type axisTick struct {
	X     float64
	Label string
}

type fnRow struct {
	Name, Where string
	Self, Total int
	SelfPct     float64
	TotalPct    float64
}

type legendItem struct {
	Fill, Label string
}

// buildFlame lays a trace out as an icicle over time: a sample's stack
// lasts from its timestamp to the next sample's (the last one for the
// median gap), the outermost frame at the top, and a frame that stays on
// the stack across samples (the same stack id at that depth) is one box.
func buildFlame(in TraceInput) flame {
	t := in.Trace
	f := flame{Name: in.Name, NSamples: len(t.Samples)}
	samples := slices.Clone(t.Samples)
	sort.SliceStable(samples, func(i, j int) bool { return samples[i].Timestamp < samples[j].Timestamp })
	frames := make([][4]any, len(t.Frames))
	for i, fr := range t.Frames {
		frames[i] = [4]any{fr.Name, t.url(fr), deref(fr.Line), deref(fr.Column)}
	}
	b, _ := json.Marshal(frames)
	f.FramesRef = string(b)
	if len(samples) == 0 {
		f.Empty = true
		f.Height = laneHeight + axisHeight
		return f
	}
	// Sample spans.
	var gaps []float64
	for i := 1; i < len(samples); i++ {
		if g := samples[i].Timestamp - samples[i-1].Timestamp; g > 0 {
			gaps = append(gaps, g)
		}
	}
	last := 1.0
	if len(gaps) > 0 {
		sort.Float64s(gaps)
		last = gaps[len(gaps)/2]
	}
	t0 := samples[0].Timestamp
	t1 := samples[len(samples)-1].Timestamp + last
	scale := (chartWidth - 2*edgePx) / (t1 - t0)
	x := func(ts float64) float64 { return edgePx + (ts-t0)*scale }
	f.Span = ms(t1 - t0)
	f.Ticks = ticks(t0, t1, x)

	// Boxes: open[d] is the box under way at depth d.
	type open struct {
		stack, n int
		startTS  float64
	}
	var opens []open
	rows := 0
	emit := func(d int, o open, endTS float64) {
		w := x(endTS) - x(o.startTS)
		if d >= maxRows || w < minBoxPx {
			f.Hidden++
			return
		}
		rows = max(rows, d+1)
		fid := *t.Stacks[o.stack].FrameID
		fr := t.Frames[fid]
		f.Boxes = append(f.Boxes, box{
			X: x(o.startTS), Y: laneHeight + axisHeight + float64(d)*rowHeight, W: w,
			Frame: fid, Fill: frameColor(t.url(fr), fr.Name), Label: fit(fr.Name, w-6),
			Ms: ms(endTS - o.startTS), Sample: strconv.Itoa(o.n),
		})
	}
	var path strings.Builder
	forced := classifyForced(samples, in.Forced)
	for _, w := range in.Forced {
		a, b := max(w.Start, t0), min(w.End, t1)
		if w.End > w.Start && b > a {
			f.Spans = append(f.Spans, span{X: x(a), W: max(x(b)-x(a), 1)})
		}
	}
	for i, s := range samples {
		if s.Marker != "" {
			f.Markers = true
		}
		switch forced[i] {
		case sampleForced:
			f.Forced = append(f.Forced, x(s.Timestamp))
		case sampleMaybeForced:
			f.Maybe = append(f.Maybe, x(s.Timestamp))
		default:
			fmt.Fprintf(&path, "M%.1f %.0fv%.0f", x(s.Timestamp), laneHeight-16, 12.0)
		}
		c := t.chain(s.StackID)
		if len(c) == 0 {
			f.NoStack++
		}
		// Close the boxes this sample does not continue.
		keep := 0
		for keep < len(opens) && keep < len(c) && opens[keep].stack == c[keep] {
			keep++
		}
		for d := len(opens) - 1; d >= keep; d-- {
			emit(d, opens[d], s.Timestamp)
		}
		opens = opens[:keep]
		for d := range opens {
			opens[d].n++
		}
		for d := keep; d < len(c); d++ {
			opens = append(opens, open{stack: c[d], startTS: s.Timestamp, n: 1})
		}
	}
	for d := len(opens) - 1; d >= 0; d-- {
		emit(d, opens[d], t1)
	}
	// Draw order: by depth, then time (stable for tests and diffs).
	sort.SliceStable(f.Boxes, func(i, j int) bool {
		if f.Boxes[i].Y != f.Boxes[j].Y {
			return f.Boxes[i].Y < f.Boxes[j].Y
		}
		return f.Boxes[i].X < f.Boxes[j].X
	})
	f.Samples = path.String()
	f.NForced = len(f.Forced)
	f.NForces = len(in.Forced)
	f.Height = laneHeight + axisHeight + float64(rows)*rowHeight + 4
	f.Functions, f.MoreFns = functions(&t, samples)
	seen := map[string]bool{}
	for _, fr := range t.Frames {
		u := t.url(fr)
		if !seen[u] && len(f.Legend) < 8 {
			seen[u] = true
			label := u
			if label == "" {
				label = "(no script: native or builtin)"
			}
			f.Legend = append(f.Legend, legendItem{Fill: frameColor(u, ""), Label: label})
		}
	}
	return f
}

const (
	sampleOther = iota
	sampleForced
	sampleMaybeForced
)

// classifyForced says which samples (sorted by time) were forced: each
// window holds one forced sample, so a sample alone in a window is it;
// when a window holds several (a sampleInterval shorter than the force
// took), one of them is, and each is "maybe forced".
func classifyForced(samples []TraceSample, ws []Window) []int {
	out := make([]int, len(samples))
	for _, w := range ws {
		lo := sort.Search(len(samples), func(i int) bool { return samples[i].Timestamp >= w.Start-Slack })
		hi := sort.Search(len(samples), func(i int) bool { return samples[i].Timestamp > w.End+Slack })
		for i := lo; i < hi; i++ {
			if hi-lo == 1 && out[i] != sampleMaybeForced {
				out[i] = sampleForced
			} else {
				out[i] = sampleMaybeForced
			}
		}
	}
	return out
}

// functions is the per-function table: samples with the frame on top
// (self) and anywhere on the stack (total), most total first.
func functions(t *Trace, samples []TraceSample) ([]fnRow, int) {
	self := make([]int, len(t.Frames))
	total := make([]int, len(t.Frames))
	for _, s := range samples {
		c := t.chain(s.StackID)
		if len(c) == 0 {
			continue
		}
		self[*t.Stacks[c[len(c)-1]].FrameID]++
		seen := map[int]bool{}
		for _, id := range c {
			fid := *t.Stacks[id].FrameID
			if !seen[fid] {
				seen[fid] = true
				total[fid]++
			}
		}
	}
	var rows []fnRow
	n := float64(len(samples))
	for i, fr := range t.Frames {
		if total[i] == 0 {
			continue
		}
		where := t.url(fr)
		if fr.Line != nil {
			where += ":" + strconv.Itoa(*fr.Line)
			if fr.Column != nil {
				where += ":" + strconv.Itoa(*fr.Column)
			}
		}
		rows = append(rows, fnRow{Name: orAnon(fr.Name), Where: where, Self: self[i], Total: total[i],
			SelfPct: 100 * float64(self[i]) / n, TotalPct: 100 * float64(total[i]) / n})
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Total != rows[j].Total {
			return rows[i].Total > rows[j].Total
		}
		return rows[i].Self > rows[j].Self
	})
	const most = 25
	if len(rows) > most {
		return rows[:most], len(rows) - most
	}
	return rows, 0
}

func (t *Trace) url(f TraceFrame) string {
	if f.ResourceID == nil {
		return ""
	}
	return t.Resources[*f.ResourceID]
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func orAnon(name string) string {
	if name == "" {
		return "(anonymous)"
	}
	return name
}

// ticks are the time axis's labels: a round step giving 5 to 10 of them.
func ticks(t0, t1 float64, x func(float64) float64) []axisTick {
	span := t1 - t0
	if span <= 0 {
		return nil
	}
	step := math.Pow(10, math.Floor(math.Log10(span/5)))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(step*m) <= 10 {
			step *= m
			break
		}
	}
	// As many decimals as the step needs (in seconds from 1 s up).
	unit, div := " ms", 1.0
	if step >= 1000 {
		unit, div = " s", 1000
	}
	dec := max(0, int(math.Ceil(-math.Log10(step/div)-1e-9)))
	var out []axisTick
	for i := math.Ceil(t0 / step); i*step <= t1; i++ {
		v := i * step
		out = append(out, axisTick{X: x(v), Label: strconv.FormatFloat(v/div, 'f', dec, 64) + unit})
		if len(out) > 20 {
			break
		}
	}
	return out
}

// ms formats milliseconds for people.
func ms(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 10000:
		return strconv.FormatFloat(v/1000, 'f', 1, 64) + " s"
	case a >= 1000:
		return strconv.FormatFloat(v/1000, 'f', 2, 64) + " s"
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 0, 64) + " ms"
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + " ms"
}

// fit shortens a label to about width units, "" when not even two
// characters fit.
func fit(s string, width float64) string {
	s = orAnon(s)
	n := int(width / charPx)
	r := []rune(s)
	switch {
	case n < 2:
		return ""
	case len(r) <= n:
		return s
	}
	return string(r[:n-1]) + "…"
}

// frameColor is a warm flame-graph colour: the hue from the frame's
// script, the shade from its name, so that neighbours differ; frames
// without a script are grey-blue.
func frameColor(url, name string) string {
	n := hash(name)
	if url == "" {
		return fmt.Sprintf("hsl(210,%d%%,%d%%)", 14+n%12, 74+(n>>8)%10)
	}
	h := hash(url)
	return fmt.Sprintf("hsl(%d,%d%%,%d%%)", 6+h%46, 68+(n>>4)%22, 58+(n>>12)%16)
}

func hash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}
