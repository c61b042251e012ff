package report

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

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
	f := flame{Name: in.Name, NSamples: len(t.Samples), FramesRef: framesRef(&t)}
	samples := slices.Clone(t.Samples)
	sort.SliceStable(samples, func(i, j int) bool { return samples[i].Timestamp < samples[j].Timestamp })
	if len(samples) == 0 {
		f.Empty = true
		f.Height = laneHeight + axisHeight
		return f
	}
	ax := newTimeAxis(samples)
	f.Span = ms(ax.t1 - ax.t0)
	f.Ticks = ticks(ax.t0, ax.t1, ax.x)
	f.lane(samples, in.Forced, ax)
	ic := icicle{t: &t, ax: ax}
	for _, s := range samples {
		c := t.chain(s.StackID)
		if len(c) == 0 {
			f.NoStack++
		}
		ic.sample(c, s.Timestamp)
	}
	ic.closeFrom(0, ax.t1)
	f.Boxes, f.Hidden = ic.boxes, ic.hidden
	// Draw order: by depth, then time (stable for tests and diffs).
	sort.SliceStable(f.Boxes, func(i, j int) bool {
		if f.Boxes[i].Y != f.Boxes[j].Y {
			return f.Boxes[i].Y < f.Boxes[j].Y
		}
		return f.Boxes[i].X < f.Boxes[j].X
	})
	f.Height = laneHeight + axisHeight + float64(ic.rows)*rowHeight + 4
	f.Functions, f.MoreFns = functions(&t, samples)
	f.Legend = legend(&t)
	return f
}

// framesRef is the JSON of the frames for the tooltip: [[name, url,
// line, column], ...].
func framesRef(t *Trace) string {
	frames := make([][4]any, len(t.Frames))
	for i, fr := range t.Frames {
		frames[i] = [4]any{fr.Name, t.url(fr), deref(fr.Line), deref(fr.Column)}
	}
	b, _ := json.Marshal(frames)
	return string(b)
}

// A timeAxis maps a trace's time, from its first sample (t0) to the end
// of its last (t1), onto the chart's width.
type timeAxis struct {
	t0, t1, scale float64
}

// newTimeAxis is the axis of samples, sorted by time and not empty: the
// last sample lasts for the median gap between samples.
func newTimeAxis(samples []TraceSample) timeAxis {
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
	return timeAxis{t0: t0, t1: t1, scale: (chartWidth - 2*edgePx) / (t1 - t0)}
}

// x is the chart's x of time ts.
func (a timeAxis) x(ts float64) float64 { return edgePx + (ts-a.t0)*a.scale }

// lane draws the samples lane: the forces' spans, a tick per sample, and
// the forced samples and those that may be apart.
func (f *flame) lane(samples []TraceSample, forced []Window, ax timeAxis) {
	x := ax.x
	for _, w := range forced {
		a, b := max(w.Start, ax.t0), min(w.End, ax.t1)
		if w.End > w.Start && b > a {
			f.Spans = append(f.Spans, span{X: x(a), W: max(x(b)-x(a), 1)})
		}
	}
	var path strings.Builder
	kinds := classifyForced(samples, forced)
	for i, s := range samples {
		if s.Marker != "" {
			f.Markers = true
		}
		switch kinds[i] {
		case sampleForced:
			f.Forced = append(f.Forced, x(s.Timestamp))
		case sampleMaybeForced:
			f.Maybe = append(f.Maybe, x(s.Timestamp))
		default:
			fmt.Fprintf(&path, "M%.1f %.0fv%.0f", x(s.Timestamp), laneHeight-16, 12.0)
		}
	}
	f.Samples = path.String()
	f.NForced = len(f.Forced)
	f.NForces = len(forced)
}

// An icicle lays out a flame chart's boxes, sample by sample.
type icicle struct {
	t      *Trace
	ax     timeAxis
	opens  []openBox // opens[d] is the box under way at depth d
	boxes  []box
	rows   int // depth of the deepest box drawn, plus one
	hidden int // boxes too narrow or deep to draw
}

// An openBox is a box under way: its stack id, the number of samples it
// has lasted and when it began.
type openBox struct {
	stack, n int
	startTS  float64
}

// sample takes the sample at ts, whose stack is chain c: it closes the
// boxes the sample does not continue, and opens those it begins.
func (ic *icicle) sample(c []int, ts float64) {
	keep := 0
	for keep < len(ic.opens) && keep < len(c) && ic.opens[keep].stack == c[keep] {
		keep++
	}
	ic.closeFrom(keep, ts)
	for d := range ic.opens {
		ic.opens[d].n++
	}
	for d := keep; d < len(c); d++ {
		ic.opens = append(ic.opens, openBox{stack: c[d], startTS: ts, n: 1})
	}
}

// closeFrom closes the open boxes at depth keep and below at endTS, the
// deepest first.
func (ic *icicle) closeFrom(keep int, endTS float64) {
	for d := len(ic.opens) - 1; d >= keep; d-- {
		ic.emit(d, ic.opens[d], endTS)
	}
	ic.opens = ic.opens[:keep]
}

// emit draws box o, at depth d, ending at endTS, unless it is too narrow
// or too deep.
func (ic *icicle) emit(d int, o openBox, endTS float64) {
	x := ic.ax.x
	w := x(endTS) - x(o.startTS)
	if d >= maxRows || w < minBoxPx {
		ic.hidden++
		return
	}
	ic.rows = max(ic.rows, d+1)
	fid := *ic.t.Stacks[o.stack].FrameID
	fr := ic.t.Frames[fid]
	ic.boxes = append(ic.boxes, box{
		X: x(o.startTS), Y: laneHeight + axisHeight + float64(d)*rowHeight, W: w,
		Frame: fid, Fill: frameColor(ic.t.url(fr), fr.Name), Label: fit(fr.Name, w-6),
		Ms: ms(endTS - o.startTS), Sample: strconv.Itoa(o.n),
	})
}

// legend is the colours of the first 8 scripts of the trace's frames.
func legend(t *Trace) []legendItem {
	var items []legendItem
	seen := map[string]bool{}
	for _, fr := range t.Frames {
		u := t.url(fr)
		if !seen[u] && len(items) < 8 {
			seen[u] = true
			label := u
			if label == "" {
				label = "(no script: native or builtin)"
			}
			items = append(items, legendItem{Fill: frameColor(u, ""), Label: label})
		}
	}
	return items
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

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
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
