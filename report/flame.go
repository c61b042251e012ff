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
