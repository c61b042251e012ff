package leaks

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/memory/heapsnapshot/heapsnapshottest"
)

// The dominator tree: what two nodes both hold is retained by neither,
// but by the node that dominates both.
func TestDominators(t *testing.T) {
	g := &heapsnapshottest.Graph{}
	root := g.Node("synthetic", "", 1, 0)
	a := g.Node("object", "A", 3, 10)
	b := g.Node("object", "B", 5, 20)
	c := g.Node("object", "C", 7, 40)
	d := g.Node("array", "", 9, 1000)
	e := g.Node("object", "E", 11, 80)
	g.Edge(root, "element", "1", a)
	g.Edge(root, "element", "2", b)
	g.Edge(a, "property", "c", c)
	g.Edge(b, "property", "c", c)
	g.Edge(c, "internal", "elements", d)
	g.Edge(a, "property", "e", e)
	g.Edge(b, "weak", "e", e) // weak: no hold
	s := build(t, g)
	r := dominators(s, strongEdge)
	assert.DeepEqual(t, r.idom, []int32{-1, int32(root), int32(root), int32(root), int32(c), int32(a)})
	assert.Equal(t, r.size[a], int64(10+80))
	assert.Equal(t, r.size[c], int64(1040))
	assert.Equal(t, r.size[root], int64(1150))
	assert.Equal(t, r.of([]int{a, e}), int64(90)) // e counted once, in a's
	assert.Equal(t, r.of([]int{a, b}), int64(110))
}

// A group reports what its members retain, in all and per iteration;
// a listener, what its handler's closure holds, with a path to it.
func TestRetainedSizes(t *testing.T) {
	b := newPage(0)
	f := newPage(0)
	for _, foo := range f.add("Foo", 4, 0) {
		f.g.Edge(foo, "internal", "elements", f.g.Node("array", "", f.nextID, 1000))
		f.nextID += 2
	}
	handler := f.g.Node("closure", "onCustomClick", 7001, 32)
	context := f.g.Node("object", "system / Context", 7003, 40)
	big := f.g.Node("array", "", 7005, 16<<20)
	f.g.Edge(handler, "internal", "context", context)
	f.g.Edge(context, "context", "big", big)
	listeners := f.g.Node("synthetic", "(Event listeners)", 7007, 0)
	f.g.Element(0, "element", 3, listeners)
	f.g.Edge(listeners, "internal", "custom-click", handler)
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 2,
		ListenersBefore: []Listener{}, ListenersAfter: []Listener{{"Window", "custom-click", 7001}, {"Window", "custom-click", 0}}})
	assert.DeepEqual(t, names(r), []string{"objects Foo", "event-listeners Window custom-click"})
	assert.Equal(t, r.Leaks[0].RetainedBytes, int64(4*(24+1000)))
	assert.Equal(t, r.Leaks[0].RetainedPerIteration, int64(2*(24+1000)))
	l := r.Leaks[1]
	assert.Equal(t, l.RetainedBytes, int64(32+40+16<<20))
	assert.DeepEqual(t, l.RetainerPath, []string{"(Event listeners)", "custom-click (internal)", "onCustomClick()"})
}
