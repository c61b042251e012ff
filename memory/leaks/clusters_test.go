package leaks

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// A group splits by the shape of its members' paths: the page's arrays
// (one a round, in Window.store) are reported on their own, with their
// path, where the framework's (7 re-made arrays in its fibers) would
// have made the whole group 3 + 7, no multiple of 3, and hidden them.
func TestClustersSplitByPath(t *testing.T) {
	const n = 3
	b := newPage(0)
	f := newPage(0)
	g := f.g
	f.add("Array", n, 0)
	fibers := g.Node("object", "FiberRootNode", 4001, 64)
	g.Edge(f.window, "property", "__reactContainer", fibers)
	for k := range 7 {
		fiber := g.Node("object", "FiberNode", uint32(4003+4*k), 64)
		g.Element(fibers, "element", k, fiber)
		arr := g.Node("object", "Array", uint32(4005+4*k), 16)
		g.Edge(fiber, "property", "memoizedState", arr)
	}
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: n})
	assert.DeepEqual(t, names(r), []string{"objects Array"})
	assert.Equal(t, r.Leaks[0].PerIteration, int64(1))
	assert.DeepEqual(t, r.Leaks[0].RetainerPath[:3], []string{"Window", "store (property)", "Array"})
}

// Members held in two ways, neither a multiple of N on its own, are
// still one leak together, as before clustering.
func TestClustersPoolWhatGrowsTogether(t *testing.T) {
	b := newPage(0)
	f := newPage(0)
	g := f.g
	f.add("Foo", 2, 0)
	holder := g.Node("object", "Holder", 4001, 16)
	g.Edge(f.window, "property", "other", holder)
	for k := range 4 {
		foo := g.Node("object", "Foo", uint32(4003+2*k), 24)
		g.Element(holder, "element", k, foo)
	}
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 3})
	assert.DeepEqual(t, names(r), []string{"objects Foo"})
	assert.Equal(t, r.Leaks[0].CountDelta, int64(6))
}

// A linked list's head and the links deeper in share a shape.
func TestClustersLinkedList(t *testing.T) {
	b := newPage(0)
	f := newPage(0)
	g := f.g
	prev, edge := f.window, "list"
	for k := range 60 {
		o := g.Node("object", "Link", uint32(7001+2*k), 16)
		g.Edge(prev, "property", edge, o)
		prev, edge = o, "next"
	}
	r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 1})
	assert.DeepEqual(t, names(r), []string{"objects Link"})
	assert.Equal(t, r.Leaks[0].CountDelta, int64(60))
}

// With iteration marks, a cluster some iterations made none of is a
// structure made then, not a share of a growth, and is not pooled:
// a copy kept from the first iteration and the last two copies of
// another structure are no leak together, where two holders of a
// growth, split unevenly each iteration, still are.
func TestClustersPoolMarked(t *testing.T) {
	b := newPage(0) // ids up to 11
	marks := []uint32{3000, 6000}
	hold := func(f *page, prop string, ids ...uint32) {
		list := f.g.Node("object", "Array", ids[0]-1, 16)
		f.g.Edge(f.window, "property", prop, list)
		for k, id := range ids {
			f.g.Element(list, "element", k, f.g.Node("object", "Foo", id, 24))
		}
	}
	check := func(f *page) string {
		r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: 3, Clock: 10011, Marks: marks})
		return strings.Join(names(r), ",")
	}
	f := newPage(0)
	hold(f, "first", 1001, 1003, 1005)                  // made in [3 0 0]
	hold(f, "last", 4001, 4003, 4005, 8001, 8003, 8005) // made in [0 3 3]
	assert.Equal(t, check(f), "")
	f = newPage(0)
	hold(f, "some", 1001, 4001, 4003, 8001)         // [1 2 1]
	hold(f, "others", 1101, 1103, 4101, 8101, 8103) // [2 1 2]
	assert.Equal(t, check(f), "objects Foo")
}
