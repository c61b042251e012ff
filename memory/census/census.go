package census

import (
	"errors"
	"slices"

	"github.com/wdext/wdext/memory/heapsnapshot"
)

// Counts is the result of a Count breakdown; a field is nil when the
// breakdown didn't ask for it, so it is absent from the JSON.
type Counts struct {
	Count *int64 `json:"count,omitempty"`
	Bytes *int64 `json:"bytes,omitempty"`
}

// Coarse is the result of a CoarseType breakdown.
type Coarse struct {
	Objects any `json:"objects"`
	Scripts any `json:"scripts"`
	Strings any `json:"strings"`
	Other   any `json:"other"`
}

// StackEntry is one entry of an AllocationStack result, which is a
// []StackEntry standing for SpiderMonkey's Map. Stack is the allocation
// stack, youngest frame first (SpiderMonkey's SavedFrame key); it is empty
// for items allocated with no JavaScript on the stack (the Map's null key).
// The last entry has NoStack set and a nil Stack: the items without
// allocation data (the Map's "noStack" key).
type StackEntry struct {
	Stack   []heapsnapshot.Frame `json:"stack"`
	NoStack bool                 `json:"noStack,omitempty"`
	Census  any                  `json:"census"`
}

// Coarse types, in CoarseType's order.
const (
	cObjects = iota
	cScripts
	cStrings
	cOther
)

// coarseOf maps V8 node type names to coarse types; the rest are other.
var coarseOf = map[string]int{
	"object": cObjects, "closure": cObjects, "regexp": cObjects,
	"code":   cScripts,
	"string": cStrings, "concatenated string": cStrings, "sliced string": cStrings,
}

// Take conducts a census of snap, grouped by b (nil means Default()). It
// counts every node except V8's "synthetic" ones, the roots. The result
// marshals to JSON in takeCensus's shapes: Counts for Count, Coarse for
// CoarseType, a map[string]any keyed by class or type name for ObjectClass
// (with an "other" key) and InternalType, []StackEntry for AllocationStack,
// and []any for List.
func Take(snap *heapsnapshot.Snapshot, b Breakdown) (any, error) {
	if snap == nil {
		return nil, errors.New("census: no snapshot")
	}
	if b == nil {
		b = Default()
	}
	c := &censor{snap: snap}
	types := snap.NodeTypes()
	c.coarse = make([]int, len(types))
	c.typeKey = make([]int, len(types))
	skip := make([]bool, len(types))
	for t, name := range types {
		ct, ok := coarseOf[name]
		if !ok {
			ct = cOther
		}
		c.coarse[t] = ct
		c.typeKey[t] = slices.Index(types, name) // merges duplicate names
		skip[t] = name == "synthetic"
	}
	root := c.tally(b)
	for i := range snap.NodeCount() {
		if !skip[snap.TypeIndex(i)] {
			root.add(i)
		}
	}
	return root.report(), nil
}

// censor holds what the tallies share.
type censor struct {
	snap    *heapsnapshot.Snapshot
	coarse  []int // by type index
	typeKey []int // by type index: the first type index with the same name
}

// A tally accumulates the items a breakdown is given.
type tally interface {
	add(node int)
	report() any
}

func (c *censor) tally(b Breakdown) tally {
	switch b := b.(type) {
	case Count:
		return &countTally{c: c, want: b}
	case CoarseType:
		return &coarseTally{c: c, parts: [4]tally{c.tally(b.Objects), c.tally(b.Scripts), c.tally(b.Strings), c.tally(b.Other)}}
	case ObjectClass:
		return &classTally{c: c, then: b.Then, byClass: map[string]tally{}, other: c.tally(b.Other)}
	case InternalType:
		return &typeTally{c: c, then: b.Then, byType: make([]tally, len(c.typeKey))}
	case AllocationStack:
		return &stackTally{c: c, then: b.Then, byID: map[uint32]tally{}, noStack: c.tally(b.NoStack)}
	case List:
		l := make(listTally, len(b))
		for i, e := range b {
			l[i] = c.tally(e)
		}
		return l
	}
	return &countTally{c: c, want: countAll} // nil: an omitted breakdown
}

type countTally struct {
	c         *censor
	want      Count
	n, nbytes int64
}

func (t *countTally) add(i int) {
	t.n++
	t.nbytes += t.c.snap.SelfSize(i)
}

func (t *countTally) report() any {
	var r Counts
	if t.want.Count {
		r.Count = &t.n
	}
	if t.want.Bytes {
		r.Bytes = &t.nbytes
	}
	return r
}

type coarseTally struct {
	c     *censor
	parts [4]tally
}

func (t *coarseTally) add(i int) { t.parts[t.c.coarse[t.c.snap.TypeIndex(i)]].add(i) }

func (t *coarseTally) report() any {
	return Coarse{t.parts[cObjects].report(), t.parts[cScripts].report(), t.parts[cStrings].report(), t.parts[cOther].report()}
}

type classTally struct {
	c       *censor
	then    Breakdown
	byClass map[string]tally
	other   tally
}

func (t *classTally) add(i int) {
	class, ok := t.c.snap.ClassName(i)
	if !ok {
		t.other.add(i)
		return
	}
	sub := t.byClass[class]
	if sub == nil {
		sub = t.c.tally(t.then)
		t.byClass[class] = sub
	}
	sub.add(i)
}

func (t *classTally) report() any {
	r := make(map[string]any, len(t.byClass)+1)
	for class, sub := range t.byClass {
		r[class] = sub.report()
	}
	// As in SpiderMonkey, "other" wins over a class of that name.
	r["other"] = t.other.report()
	return r
}

type typeTally struct {
	c      *censor
	then   Breakdown
	byType []tally // by typeKey
}

func (t *typeTally) add(i int) {
	k := t.c.typeKey[t.c.snap.TypeIndex(i)]
	if t.byType[k] == nil {
		t.byType[k] = t.c.tally(t.then)
	}
	t.byType[k].add(i)
}

func (t *typeTally) report() any {
	r := map[string]any{}
	for k, sub := range t.byType {
		if sub != nil {
			r[t.c.snap.NodeTypes()[k]] = sub.report()
		}
	}
	return r
}

type stackTally struct {
	c       *censor
	then    Breakdown
	byID    map[uint32]tally // by trace node id; nil for ids the tree lacks
	noStack tally
}

func (t *stackTally) add(i int) {
	id := t.c.snap.TraceNodeID(i)
	sub, seen := t.byID[id]
	if !seen && id != 0 {
		if _, ok := t.c.snap.Stack(id); ok {
			sub = t.c.tally(t.then)
		}
		t.byID[id] = sub
	}
	if sub == nil {
		sub = t.noStack
	}
	sub.add(i)
}

func (t *stackTally) report() any {
	ids := make([]uint32, 0, len(t.byID))
	for id, sub := range t.byID {
		if sub != nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids) // V8 numbers trace nodes as it creates them
	r := make([]StackEntry, 0, len(ids)+1)
	for _, id := range ids {
		frames, _ := t.c.snap.Stack(id)
		r = append(r, StackEntry{Stack: frames, Census: t.byID[id].report()})
	}
	return append(r, StackEntry{NoStack: true, Census: t.noStack.report()})
}

type listTally []tally

func (l listTally) add(i int) {
	for _, t := range l {
		t.add(i)
	}
}

func (l listTally) report() any {
	r := make([]any, len(l))
	for i, t := range l {
		r[i] = t.report()
	}
	return r
}
