package census

import (
	"github.com/wdext/wdext/memory/heap"
	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/wire"
)

// V8 adapts a V8 heap snapshot for Take: kinds are V8's node types, coarse
// types as coarseOf says, and "synthetic" nodes (roots) are skipped. V8
// returns nil for a nil snapshot.
func V8(s *heapsnapshot.Snapshot) heap.Heap {
	if s == nil {
		return nil
	}
	types := s.NodeTypes()
	h := &v8Heap{s: s, kinds: make([]heap.Kind, len(types)), class: make([]v8Class, len(types))}
	for t, name := range types {
		h.kinds[t] = heap.Kind{Name: name, Coarse: coarseOf[name], Skip: name == "synthetic"}
		h.class[t] = classOf[name]
	}
	return h
}

// coarseOf maps V8 node type names to coarse types; the rest are other.
var coarseOf = map[string]heap.CoarseKind{
	"object": heap.CoarseObjects, "closure": heap.CoarseObjects, "regexp": heap.CoarseObjects,
	"code":   heap.CoarseScripts,
	"string": heap.CoarseStrings, "concatenated string": heap.CoarseStrings, "sliced string": heap.CoarseStrings,
}

// v8Class is what ClassName says of the nodes of one V8 type.
type v8Class struct {
	object bool   // they are JavaScript objects
	name   string // their class; "" for each node's name
}

// classOf gives the classes of the V8 node types that are JavaScript
// objects, as heapsnapshot.Snapshot.ClassName does: an "object" node's
// class is its name, the constructor's.
var classOf = map[string]v8Class{"object": {true, ""}, "closure": {true, "Function"}, "regexp": {true, "RegExp"}}

type v8Heap struct {
	s     *heapsnapshot.Snapshot
	kinds []heap.Kind
	class []v8Class // by type
}

func (h *v8Heap) NodeCount() int     { return h.s.NodeCount() }
func (h *v8Heap) Kinds() []heap.Kind { return h.kinds }

func (h *v8Heap) Stack(id uint32) ([]wire.Frame, bool) { return h.s.Stack(id) }

// ClassName is heapsnapshot.Snapshot.ClassName without its comparisons of
// type names, which would cost a census more than the call.
func (h *v8Heap) ClassName(i int) (string, bool) {
	c := h.class[h.s.TypeIndex(i)]
	if c.object && c.name == "" {
		return h.s.Name(i), true
	}
	return c.name, c.object
}

func (h *v8Heap) Nodes(start int, dst []heap.Node) {
	s := h.s
	for j := range dst {
		i := start + j
		dst[j] = heap.Node{Size: s.SelfSize(i), Kind: int32(s.TypeIndex(i)), Trace: s.TraceNodeID(i)}
	}
}
