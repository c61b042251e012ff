package webkitgtk

import (
	"slices"

	"github.com/wdext/wdext/polyfill"
)

// trackingComplete is ScriptProfiler.trackingComplete: the samples of
// JavaScriptCore's sampling profiler since tracking started.
type trackingComplete struct {
	Timestamp float64 `json:"timestamp"`
	Samples   struct {
		StackTraces []struct {
			Timestamp   float64      `json:"timestamp"`
			StackFrames []stackFrame `json:"stackFrames"`
		} `json:"stackTraces"`
	} `json:"samples"`
}

type stackFrame struct {
	SourceID string `json:"sourceID"`
	Name     string `json:"name"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	URL      string `json:"url"`
}

// toBatch turns JavaScriptCore's samples into the polyfill's: times in
// epoch milliseconds (stopwatch seconds * 1000 + origin), stacks outermost
// first, frames without a script URL left out unless they are named
// host functions (line -1: "now" for performance.now()).
//
// JavaScriptCore gives part of the samples the timestamp 0 (measured on
// WebKitGTK 2.50.6: the earlier ones of a run, 609 of the 707 samples of a
// 1 s loop, 271 of 337 of two 300 ms loops 300 ms apart). Their order is
// right, so they go back to back, at the sampler's period (the median
// gap between the samples with a time), before the time after them (the
// next sample's, or when tracking stopped): the sampler samples only while
// JavaScript runs, so a run of samples is most often one busy stretch.
// When that would put them before the time known before them (the
// previous sample's, or when tracking started), or the period is not
// known, they are spread evenly between the two.
func toBatch(done trackingComplete, since, origin float64) polyfill.Batch {
	traces := done.Samples.StackTraces
	period := samplerPeriod(done)
	times := make([]float64, len(traces))
	prev := since
	for i := 0; i < len(traces); {
		if t := traces[i].Timestamp; t > 0 {
			times[i], prev = t, t
			i++
			continue
		}
		j := i
		for j < len(traces) && traces[j].Timestamp <= 0 {
			j++
		}
		next := done.Timestamp
		if j < len(traces) {
			next = traces[j].Timestamp
		}
		if prev < 0 || prev > next {
			prev = next
		}
		for k := i; k < j; k++ {
			if period > 0 && next-float64(j-i)*period >= prev {
				times[k] = next - float64(j-k)*period
			} else {
				times[k] = prev + (next-prev)*float64(k-i+1)/float64(j-i+1)
			}
		}
		i = j
	}
	var b polyfill.Batch
	index := map[polyfill.Frame]int{}
	for i, st := range traces {
		ids := []int{}
		for k := len(st.StackFrames) - 1; k >= 0; k-- { // innermost first in the protocol
			f := st.StackFrames[k]
			var fr polyfill.Frame
			switch {
			case f.URL != "":
				fr = polyfill.Frame{Name: f.Name, URL: f.URL, Line: max(f.Line, 0), Column: max(f.Column, 0)}
			case f.Line < 0 && f.Name != "":
				fr = polyfill.Frame{Name: f.Name}
			default:
				continue // a script without a URL: the inspector's, the automation's, a builtin's
			}
			id, ok := index[fr]
			if !ok {
				id = len(b.Frames)
				index[fr] = id
				b.Frames = append(b.Frames, fr)
			}
			ids = append(ids, id)
		}
		b.Samples = append(b.Samples, [2]any{origin + times[i]*1000, ids})
	}
	return b
}

// samplerPeriod is the median gap between consecutive samples that have a
// time, leaving out gaps of 50 ms and more (JavaScript did not run); 0
// when there are none.
func samplerPeriod(done trackingComplete) float64 {
	var gaps []float64
	traces := done.Samples.StackTraces
	for i := 1; i < len(traces); i++ {
		a, b := traces[i-1].Timestamp, traces[i].Timestamp
		if a > 0 && b > a && b-a < 0.05 {
			gaps = append(gaps, b-a)
		}
	}
	if len(gaps) == 0 {
		return 0
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}
