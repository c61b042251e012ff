package firefox

import (
	"context"
	"fmt"
	"strings"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/wire"
)

// liveGroup is one group of process.js's "live": the live objects of one
// class allocated at one stack.
type liveGroup struct {
	Stack []wire.Frame `json:"stack"`
	Class string       `json:"class"`
	Count int64        `json:"count"`
	Bytes int64        `json:"bytes"`
}

// liveTracking is live object tracking in the page's content process,
// between live-objects/start and stop.
type liveTracking struct {
	e *Engine
	// before is what was alive at the start with an allocation stack,
	// when the allocation log already tracked sites; nil otherwise.
	before map[liveKey]liveGroup
}

// liveKey identifies a group: its class and the functions of its stack,
// by script and name. Positions are left out: SpiderMonkey's optimizing
// tier gives an allocation in a hot loop the position of the loop's
// head (measured on ESR 153: of 1,000,000 "new Foo(i)" in one loop,
// 3,311 at the "new" and 996,689 at the loop's condition, one line up).
// V8's allocation stacks, too, name functions and not positions.
type liveKey struct {
	class, stack string
}

func keyOf(g liveGroup) liveKey {
	var b strings.Builder
	for _, f := range g.Stack {
		fmt.Fprintf(&b, "%q %q %d\n", f.Source, f.FunctionDisplayName, f.SourceID)
	}
	return liveKey{g.Class, b.String()}
}

// merged is groups with the same key (keyOf) made one, with the stack
// of the largest of them.
func merged(groups []liveGroup) map[liveKey]liveGroup {
	out := map[liveKey]liveGroup{}
	for _, g := range groups {
		k := keyOf(g)
		if m, ok := out[k]; ok {
			if m.Count > g.Count {
				g.Stack = m.Stack
			}
			g.Count += m.Count
			g.Bytes += m.Bytes
		}
		out[k] = g
	}
	return out
}

// StartLiveObjects has SpiderMonkey record the allocation stack of
// every object allocated from now on in every content process (at
// probability 1), which takeCensus groups by. When the allocation log
// already tracked sites, the objects alive now with a stack are counted
// first, and a group at the stop is what is alive then less what was at
// the start (an object of the start that died makes room for a new one
// of its group).
func (e *Engine) StartLiveObjects(ctx context.Context) (engine.LiveObjectTracking, error) {
	l := &liveTracking{e: e}
	var logging bool
	if _, err := e.set(ctx, func(s *settings) { logging = s.Track; s.Live = true }); err != nil {
		return nil, err
	}
	if logging {
		groups, err := l.groups(ctx)
		if err != nil {
			l.end(ctx)
			return nil, err
		}
		l.before = merged(groups)
	}
	return l, nil
}

// groups is process.js's "live" in the page's process.
func (l *liveTracking) groups(ctx context.Context) ([]liveGroup, error) {
	r, err := ask[[]liveGroup](ctx, l.e, "live", nil, "page")
	if err != nil {
		return nil, err
	}
	if len(r.Answers) == 0 {
		return nil, wire.Errorf(wire.UnknownError, "live objects: the page's content process went away")
	}
	return r.Answers[0].Value, r.Answers[0].err()
}

// end stops the tracking in every process.
func (l *liveTracking) end(ctx context.Context) error {
	_, err := l.e.set(ctx, func(s *settings) { s.Live = false })
	return err
}

// Stop collects garbage in the page's process, groups its live objects
// that have an allocation stack by stack and class (SpiderMonkey's
// objectClass: "Object" for instances of a class), and stops tracking.
// Objects the driver's code allocated in the page's realm are left out.
func (l *liveTracking) Stop(ctx context.Context) (wire.LiveObjects, error) {
	groups, err := l.groups(ctx)
	if err2 := l.end(ctx); err == nil {
		err = err2
	}
	if err != nil {
		return wire.LiveObjects{}, err
	}
	out := wire.LiveObjects{LiveObjects: []wire.LiveObjectGroup{}}
	for k, g := range merged(groups) {
		if b, ok := l.before[k]; ok {
			g.Count -= b.Count
			g.Bytes -= b.Bytes
		}
		if g.Count <= 0 {
			continue
		}
		bytes := max(g.Bytes, 0)
		out.LiveObjects = append(out.LiveObjects, wire.LiveObjectGroup{CreatedFrom: g.Stack, Class: g.Class, Count: g.Count, InstanceSize: bytes})
		out.Count += g.Count
		out.InstanceSize += bytes
	}
	out.Sort()
	return out, nil
}
