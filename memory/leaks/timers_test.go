package leaks

import (
	"testing"

	"gotest.tools/v3/assert"
)

// timers is a page whose Window holds Blink's timer coordinator, with
// the page's tick() and poll() functions.
type timers struct {
	*page
	coordinator, tick, poll int
	at                      int // the coordinator's next element
}

func newTimers() *timers {
	p := &timers{page: newPage(0)}
	g := p.g
	p.coordinator = g.Node("native", "blink::(anonymous namespace)::DOMTimerCoordinator", 21, 56)
	g.Element(p.window, "element", 40, p.coordinator)
	p.tick = g.Node("closure", "tick", 23, 32)
	g.Edge(p.window, "property", "tick", p.tick)
	p.poll = g.Node("closure", "poll", 25, 32)
	g.Edge(p.window, "property", "poll", p.poll)
	return p
}

// timer adds a timer whose callback is closure fn, as Blink holds it.
func (p *timers) timer(fn int) int {
	g := p.g
	node := func(name string, size int64) int {
		n := g.Node("native", name, p.nextID, size)
		p.nextID += 2
		return n
	}
	t, action, v8fn := node("DOMTimer", 168), node("ScheduledAction", 56), node("V8Function", 32)
	g.Element(p.coordinator, "element", p.at, t)
	p.at++
	g.Element(t, "element", 1, action)
	g.Element(action, "element", 2, v8fn)
	g.Element(v8fn, "element", 1, fn)
	return t
}

// A timer no one clears is a leak by its callback, a shared function or
// a new closure; one cleared and set again each iteration is not. What
// a timer's closure holds is the timer's, and its path goes on to the
// callback.
func TestTimers(t *testing.T) {
	b, f := newTimers(), newTimers()
	b.timer(b.tick)
	b.timer(b.poll)
	f.nextID = 5001
	f.timer(f.tick) // the page's own, before and after, with a new id
	for range 6 {
		f.timer(f.tick)
	}
	f.timer(f.poll) // cleared and set anew
	// A timer a warm-up set before the baseline, with its own closure and
	// array, renumbered as V8 renumbers Blink's nodes; and 3 new ones.
	for _, p := range []*timers{b, f} {
		fn := p.g.Node("closure", "", 31, 32)
		p.g.Edge(fn, "context", "big", p.g.Node("array", "", 33, 8000))
		p.timer(fn)
	}
	for range 3 {
		fn := f.g.Node("closure", "", f.nextID, 32)
		f.nextID += 2
		big := f.g.Node("object", "Array", f.nextID, 16)
		f.nextID += 2
		f.g.Edge(fn, "context", "big", big)
		f.g.Edge(big, "internal", "elements", f.g.Node("array", "", f.nextID, 8000))
		f.nextID += 2
		f.timer(fn)
	}
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 3})
	assert.DeepEqual(t, names(r), []string{"timers tick()", "timers (anonymous)()"})
	tick, anon := r.Leaks[0], r.Leaks[1]
	assert.Equal(t, tick.CountDelta, int64(6))
	assert.Equal(t, tick.PerIteration, int64(2))
	// The timer's own nodes; tick() is the page's, which the Window holds.
	assert.Equal(t, tick.RetainedPerIteration, int64(2*(168+56+32)))
	assert.Equal(t, anon.PerIteration, int64(1))
	assert.Equal(t, anon.RetainedPerIteration, int64(168+56+32+32+16+8000))
	assert.DeepEqual(t, anon.RetainerPath[len(anon.RetainerPath)-6:], []string{
		"[1] (element)", "ScheduledAction", "[2] (element)", "V8Function", "[1] (element)", "()"})
	assert.DeepEqual(t, anon.RetainerPath[:5], []string{"Window", "[40] (element)", "blink::(anonymous namespace)::DOMTimerCoordinator", "[9] (element)", "DOMTimer"})
}

// Offline with memlab's rules, timers are not leaks (memlab's default
// rules do not look at them).
func TestTimersNotMemlabs(t *testing.T) {
	b, f := newTimers(), newTimers()
	f.nextID = 5001
	f.timer(f.tick)
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 1, MemlabRules: true})
	assert.DeepEqual(t, names(r), []string{})
}
