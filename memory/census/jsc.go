package census

import (
	"strings"

	"github.com/wdext/wdext/memory/heap"
	"github.com/wdext/wdext/memory/jscsnapshot"
	"github.com/wdext/wdext/wire"
)

// JSC adapts a JavaScriptCore heap snapshot for Take (see "JavaScriptCore"
// in the package documentation). JSC returns nil for a nil snapshot.
func JSC(s *jscsnapshot.Snapshot) heap.Heap {
	if s == nil {
		return nil
	}
	h := &jscHeap{s: s, kindOf: make([]int32, 2*len(s.ClassNames())), subtype: -1}
	for k := range h.kindOf {
		h.kindOf[k] = -1
	}
	// Kinds are made for the (class, object or not) pairs that occur, not
	// all of them: most classes named after a constructor are never
	// anything but ObjectSubtype nodes, which share one kind.
	names := s.ClassNames()
	for i := range s.NodeCount() {
		if s.Flags(i)&jscsnapshot.ObjectSubtype != 0 {
			if h.subtype < 0 {
				h.subtype = h.add(heap.Kind{Name: "Object", Coarse: heap.CoarseObjects})
			}
			continue
		}
		c, obj := s.ClassIndex(i), s.IsObject(i)
		k := 2 * c
		if obj {
			k++
		}
		if h.kindOf[k] >= 0 {
			continue
		}
		kind := heap.Kind{Name: names[c], Coarse: jscCoarse(names[c]), Skip: names[c] == "<root>"}
		if obj {
			kind = heap.Kind{Name: names[c], Coarse: heap.CoarseObjects}
		}
		h.kindOf[k] = h.add(kind)
	}
	return h
}

// jscCoarse is the coarse type of a class's cells that are not objects.
func jscCoarse(class string) heap.CoarseKind {
	switch {
	case class == "string": // JSString, ropes included
		return heap.CoarseStrings
	case strings.HasSuffix(class, "Executable"), strings.HasSuffix(class, "CodeBlock"):
		return heap.CoarseScripts
	}
	return heap.CoarseOther
}

type jscHeap struct {
	s       *jscsnapshot.Snapshot
	kinds   []heap.Kind
	kindOf  []int32 // by 2×class index, +1 for objects; -1 if absent
	subtype int32   // the kind of ObjectSubtype nodes; -1 if there are none
}

func (h *jscHeap) add(k heap.Kind) int32 {
	h.kinds = append(h.kinds, k)
	return int32(len(h.kinds) - 1)
}

func (h *jscHeap) NodeCount() int     { return h.s.NodeCount() }
func (h *jscHeap) Kinds() []heap.Kind { return h.kinds }

func (h *jscHeap) Nodes(start int, dst []heap.Node) {
	s := h.s
	for j := range dst {
		i := start + j
		k := h.subtype
		if s.Flags(i)&jscsnapshot.ObjectSubtype == 0 {
			c := 2 * s.ClassIndex(i)
			if s.IsObject(i) {
				c++
			}
			k = h.kindOf[c]
		}
		dst[j] = heap.Node{Size: s.SelfSize(i), Kind: k}
	}
}

func (h *jscHeap) ClassName(i int) (string, bool) { return h.s.ClassName(i), h.s.IsObject(i) }

// Stack reports no stacks: JSC records no allocation sites.
func (h *jscHeap) Stack(uint32) ([]wire.Frame, bool) { return nil, false }
