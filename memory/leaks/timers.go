package leaks

import (
	"slices"

	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/wire"
)

// Blink's timers in a V8 snapshot: a native "DOMTimer" node for each
// pending setTimeout and each setInterval, which holds a ScheduledAction,
// which holds a V8Function, which holds the callback's closure (measured
// on Chromium 156). A timer no one clears keeps its callback and all its
// closure holds, and is invisible to the objects and collections rules
// when its callback is a function the page already had.

// isTimer tells a Blink timer's node.
func isTimer(s *heapsnapshot.Snapshot, i int) bool {
	return s.Type(i) == "native" && s.Name(i) == "DOMTimer"
}

// timerSteps are the node names from a DOMTimer to its callback.
var timerSteps = []string{"ScheduledAction", "V8Function"}

// timerCallback follows timer i to its callback's closure: the nodes
// after i and the edge numbers that reach them; ok is false for a timer
// whose handler is a string of code.
func timerCallback(s *heapsnapshot.Snapshot, i int) (nodes, edges []int, ok bool) {
	at := i
	for step := 0; step <= len(timerSteps); step++ {
		found := false
		lo, hi := s.EdgeRange(at)
		for k := lo; k < hi; k++ {
			to := s.EdgeTo(k)
			if step < len(timerSteps) && s.Type(to) == "native" && s.Name(to) == timerSteps[step] ||
				step == len(timerSteps) && s.Type(to) == "closure" {
				nodes, edges, at, found = append(nodes, to), append(edges, k), to, true
				break
			}
		}
		if !found {
			return nodes, edges, false
		}
	}
	return nodes, edges, true
}

// timerName names a timer by its callback: "tick()", "(anonymous)()",
// or "(code)" for a string handler; callback is the closure's node, -1
// for a string.
func timerName(s *heapsnapshot.Snapshot, i int) (name string, callback int) {
	nodes, _, ok := timerCallback(s, i)
	if !ok {
		return "(code)", -1
	}
	callback = nodes[len(nodes)-1]
	if s.Name(callback) == "" {
		return "(anonymous)()", callback
	}
	return s.Name(callback) + "()", callback
}

// timerLeaks appends to leaks the timers whose number grew, by callback:
// a count, as the engine's listeners are, judged by fuite's rule alone.
// A timer's node is Blink's, whose heap object id V8 forgets whenever
// its allocation tracker updates its heap statistics (it keeps the ids
// of its own heap's objects only: measured, the timer a warm-up set had
// a new id in the final snapshot), so neither the clock nor the baseline
// tells the new timers. The members are as many timers as the count
// grew by, those whose callback is a new closure first: what they retain
// is their callbacks' and their closures', and their path goes on from
// the timer to the callback.
func (c *comparison) timerLeaks(leaks []wire.Leak) []wire.Leak {
	count := map[string]int{}
	for name, n := range c.in.Baseline.timers {
		count[name] = -n
	}
	// By name, the timers whose callback is a new closure, then the others.
	fresh, old := map[string][]int{}, map[string][]int{}
	for i := range c.f.NodeCount() {
		if !isTimer(c.f, i) {
			continue
		}
		name, callback := timerName(c.f, i)
		count[name]++
		if callback >= 0 && c.isNew(callback) {
			fresh[name] = append(fresh[name], i)
		} else {
			old[name] = append(old[name], i)
		}
	}
	for name, delta := range count {
		if !c.grows(int64(delta)) {
			continue
		}
		ms := slices.Concat(fresh[name], old[name])[:delta]
		kept := c.retainedBy(ms)
		c.members = append(c.members, ms)
		leaks = append(leaks, wire.Leak{
			Kind: wire.LeakTimers, Name: name,
			CountDelta: int64(delta), PerIteration: int64(delta / c.n),
			RetainedBytes: kept, RetainedPerIteration: kept / int64(c.n),
			RetainerPath: c.timerPath(c.p.representative(ms)),
			CreatedFrom:  c.createdFrom(ms),
		})
	}
	return leaks
}

// timerPath is the retainer path of timer i, on to its callback.
func (c *comparison) timerPath(i int) []string {
	path := c.p.path(i)
	nodes, edges, _ := timerCallback(c.f, i)
	for k, x := range nodes {
		path = append(path, edgeLabel(c.f.EdgeAt(edges[k])), displayName(c.f, x))
	}
	return path
}
