package census

import (
	"errors"
	"fmt"
	"slices"

	"github.com/wdext/wdext/memory/heap"
	"github.com/wdext/wdext/wire"
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
	Stack   []wire.Frame `json:"stack"`
	NoStack bool         `json:"noStack,omitempty"`
	Census  any          `json:"census"`
}

// Take conducts a census of h, grouped by b (nil means Default()). It counts
// every node except those of a Kind marked Skip, the roots. The result
// marshals to JSON in takeCensus's shapes: Counts for Count, Coarse for
// CoarseType, a map[string]any keyed by class or type name for ObjectClass
// (with an "other" key) and InternalType, []StackEntry for AllocationStack,
// and []any for List.
func Take(h heap.Heap, b Breakdown) (any, error) {
	if h == nil {
		return nil, errors.New("census: no snapshot")
	}
	if b == nil {
		b = Default()
	}
	kinds := h.Kinds()
	c := &censor{heap: h, coarse: make([]heap.CoarseKind, len(kinds)), typeKey: make([]int32, len(kinds))}
	c.v8, _ = h.(*v8Heap)
	skip := make([]bool, len(kinds))
	first := map[string]int32{} // merges kinds that share a name
	for k, kind := range kinds {
		if kind.Coarse > heap.CoarseStrings {
			return nil, fmt.Errorf("census: kind %q has no coarse type %d", kind.Name, kind.Coarse)
		}
		c.coarse[k], skip[k] = kind.Coarse, kind.Skip
		key, ok := first[kind.Name]
		if !ok {
			key = int32(len(c.typeNames))
			first[kind.Name] = key
			c.typeNames = append(c.typeNames, kind.Name)
		}
		c.typeKey[k] = key
	}
	root := c.tally(b)
	buf := make([]heap.Node, nodeBatch)
	for start, count := 0, h.NodeCount(); start < count; start += len(buf) {
		buf = buf[:min(len(buf), count-start)]
		h.Nodes(start, buf)
		if t, ok := root.(*countTally); ok {
			t.addAll(buf, skip) // a plain count needs no call per node
			continue
		}
		for j := range buf {
			if n := &buf[j]; !skip[n.Kind] {
				root.add(start+j, n)
			}
		}
	}
	return root.report(), nil
}

// nodeBatch is how many nodes Take asks a Heap for at a time: enough to
// make the call's cost vanish, few enough to stay in the L1 cache.
const nodeBatch = 256

// censor holds what the tallies share.
type censor struct {
	heap      heap.Heap
	v8        *v8Heap           // heap, if it is one
	coarse    []heap.CoarseKind // by kind
	typeKey   []int32           // by kind: index into typeNames
	typeNames []string          // the distinct kind names
}

// className is heap.ClassName, called directly for V8 snapshots, the large
// ones, so that the call is inlined.
func (c *censor) className(i int) (string, bool) {
	if c.v8 != nil {
		return c.v8.ClassName(i)
	}
	return c.heap.ClassName(i)
}

// A tally accumulates the items a breakdown is given.
type tally interface {
	add(i int, n *heap.Node) // node i
	report() any
}

func (c *censor) tally(b Breakdown) tally {
	switch b := b.(type) {
	case Count:
		return &countTally{want: b}
	case CoarseType:
		t := &coarseTally{c: c}
		t.parts[heap.CoarseObjects], t.parts[heap.CoarseScripts] = c.tally(b.Objects), c.tally(b.Scripts)
		t.parts[heap.CoarseStrings], t.parts[heap.CoarseOther] = c.tally(b.Strings), c.tally(b.Other)
		return t
	case ObjectClass:
		return &classTally{c: c, then: b.Then, byClass: map[string]tally{}, other: c.tally(b.Other)}
	case InternalType:
		return &typeTally{c: c, then: b.Then, byType: make([]tally, len(c.typeNames))}
	case AllocationStack:
		return &stackTally{c: c, then: b.Then, byID: map[uint32]tally{}, noStack: c.tally(b.NoStack)}
	case List:
		l := make(listTally, len(b))
		for i, e := range b {
			l[i] = c.tally(e)
		}
		return l
	}
	return &countTally{want: countAll} // nil: an omitted breakdown
}

type countTally struct {
	want      Count
	n, nbytes int64
}

func (t *countTally) add(_ int, n *heap.Node) {
	t.n++
	t.nbytes += n.Size
}

func (t *countTally) addAll(ns []heap.Node, skip []bool) {
	count, bytes := t.n, t.nbytes // locals stay in registers
	for j := range ns {
		if n := &ns[j]; !skip[n.Kind] {
			count++
			bytes += n.Size
		}
	}
	t.n, t.nbytes = count, bytes
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

func (t *coarseTally) add(i int, n *heap.Node) { t.parts[t.c.coarse[n.Kind]].add(i, n) }

func (t *coarseTally) report() any {
	p := &t.parts
	return Coarse{p[heap.CoarseObjects].report(), p[heap.CoarseScripts].report(), p[heap.CoarseStrings].report(), p[heap.CoarseOther].report()}
}

type classTally struct {
	c       *censor
	then    Breakdown
	byClass map[string]tally
	other   tally
}

func (t *classTally) add(i int, n *heap.Node) {
	class, ok := t.c.className(i)
	if !ok {
		t.other.add(i, n)
		return
	}
	sub := t.byClass[class]
	if sub == nil {
		sub = t.c.tally(t.then)
		t.byClass[class] = sub
	}
	sub.add(i, n)
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

func (t *typeTally) add(i int, n *heap.Node) {
	k := t.c.typeKey[n.Kind]
	if t.byType[k] == nil {
		t.byType[k] = t.c.tally(t.then)
	}
	t.byType[k].add(i, n)
}

func (t *typeTally) report() any {
	r := map[string]any{}
	for k, sub := range t.byType {
		if sub != nil {
			r[t.c.typeNames[k]] = sub.report()
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

func (t *stackTally) add(i int, n *heap.Node) {
	id := n.Trace
	sub, seen := t.byID[id]
	if !seen && id != 0 {
		if _, ok := t.c.heap.Stack(id); ok {
			sub = t.c.tally(t.then)
		}
		t.byID[id] = sub
	}
	if sub == nil {
		sub = t.noStack
	}
	sub.add(i, n)
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
		frames, _ := t.c.heap.Stack(id)
		r = append(r, StackEntry{Stack: frames, Census: t.byID[id].report()})
	}
	return append(r, StackEntry{NoStack: true, Census: t.noStack.report()})
}

type listTally []tally

func (l listTally) add(i int, n *heap.Node) {
	for _, t := range l {
		t.add(i, n)
	}
}

func (l listTally) report() any {
	r := make([]any, len(l))
	for i, t := range l {
		r[i] = t.report()
	}
	return r
}
