package leaks

import (
	"encoding/binary"
	"slices"
)

// A cluster is the members of a group that share a retainer path's
// shape, as memlab clusters its leak traces: the page's arrays never
// share a group with a framework's, and a group's path and creation site
// come from members held the same way.
type cluster struct {
	members []int
	per     int64 // growth an iteration
}

// clusters splits a group's members by the shape of their retainer paths
// and returns those that grew (see growth), each on its own. The members
// of clusters that did not grow on their own are pooled, and the pool is
// one more when it grew: a leak whose members are held in several ways
// (say, some in a Map and some in an Array, in varying numbers) is still
// found, as before clustering. With iteration marks, only clusters that
// every iteration made some of are pooled (see pooled).
func (c *comparison) clusters(members []int) []cluster {
	byShape := map[int32][]int{}
	var shapes []int32 // in the order first seen: deterministic
	for _, m := range members {
		k := c.p.shape(m)
		if _, ok := byShape[k]; !ok {
			shapes = append(shapes, k)
		}
		byShape[k] = append(byShape[k], m)
	}
	var out []cluster
	var pool []int
	for _, k := range shapes {
		ms := byShape[k]
		if per, ok := c.growth(ms); ok {
			out = append(out, cluster{ms, per})
			continue
		}
		if c.pooled(ms) {
			pool = append(pool, ms...)
		}
	}
	if len(pool) > 0 {
		if per, ok := c.growth(pool); ok {
			out = append(out, cluster{pool, per})
		}
	}
	return out
}

// pooled tells whether a cluster that did not grow on its own may be a
// share of a growth held in several ways. With iteration marks, only
// when every iteration made some of it: a cluster made in some
// iterations alone is a structure made then (the copy a framework kept
// from the first iteration, its last two renders), and pooling such
// clusters adds up to a growth that none of them is. Measured on a React
// 18 app whose list re-renders every second on its own, at N=3: clusters
// of 138 objects made in iterations [138 0 0], 219 in [0 111 108] and 63
// in [0 32 31], among others, pooled to 555 made in [141 206 208], which
// the marks rule passes (docs/leaks.md, "Clusters").
func (c *comparison) pooled(members []int) bool {
	marks := c.marks()
	return marks == nil || !slices.Contains(c.madeIn(members, marks), 0)
}

// A shape keeps its head (the source's class, the owner's name and the
// first class after it) and its last shapeTail classes: deeper paths are
// told apart by their ends, and a shape's size is bounded whatever the
// depth.
const (
	shapeHead = 3
	shapeTail = 8
)

// shape is the shape of node i's retainer path: the name of the edge
// that leaves the path's source (the global's property that holds it,
// "leakedObjects"; a GC root's), then the classes of the nodes along
// it, with a run of one to four classes that repeats at once kept once
// (a linked list's Link → Link → Link, a tree's Node → Array → Node →
// Array): a structure's head and its members deeper in are held the same
// way. -1 for an unreached node. A node's shape follows from its
// parent's, so each is made once.
func (p *paths) shape(i int) int32 {
	if p.rank[i] < 0 {
		return -1
	}
	if p.shapeOf == nil {
		p.shapeOf = make([]int32, len(p.parent))
		for k := range p.shapeOf {
			p.shapeOf[k] = -1
		}
		p.shapeID = map[string]int32{}
		p.stepID = map[string]int32{}
	}
	var todo []int // i and its ancestors without a shape yet, i first
	for x := i; x >= 0 && p.shapeOf[x] < 0; x = int(p.parent[x]) {
		todo = append(todo, x)
	}
	var out []int32
	for _, x := range slices.Backward(todo) {
		out = out[:0]
		if from := p.parent[x]; from >= 0 {
			out = append(out, p.shapes[p.shapeOf[from]]...)
			if p.parent[from] < 0 {
				e, _, _ := p.parentEdge(x)
				out = append(out, p.step(e.Type+":"+e.Name)) // the owner's name
			}
		}
		out = append(out, p.step(p.s.Type(x)+":"+p.s.Name(x)))
		for b := 1; b <= 4 && 2*b <= len(out) && len(out)-b >= shapeHead; b++ {
			if slices.Equal(out[len(out)-b:], out[len(out)-2*b:len(out)-b]) {
				out = out[:len(out)-b]
				break
			}
		}
		if len(out) > shapeHead+shapeTail {
			out = slices.Delete(out, shapeHead, len(out)-shapeTail)
		}
		p.shapeOf[x] = p.intern(out)
	}
	return p.shapeOf[i]
}

// step numbers a step of a shape.
func (p *paths) step(s string) int32 {
	id, ok := p.stepID[s]
	if !ok {
		id = int32(len(p.stepID))
		p.stepID[s] = id
	}
	return id
}

// intern numbers a shape.
func (p *paths) intern(steps []int32) int32 {
	key := make([]byte, 0, 4*len(steps))
	for _, s := range steps {
		key = binary.LittleEndian.AppendUint32(key, uint32(s))
	}
	id, ok := p.shapeID[string(key)]
	if !ok {
		id = int32(len(p.shapes))
		p.shapeID[string(key)] = id
		p.shapes = append(p.shapes, slices.Clone(steps))
	}
	return id
}
