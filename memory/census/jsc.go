package census

import (
	"strings"

	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/memory/jscsnapshot"
)

// JSC adapts a JavaScriptCore heap snapshot for Take (see "JavaScriptCore"
// in the package documentation). JSC returns nil for a nil snapshot.
func JSC(s *jscsnapshot.Snapshot) Heap {
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
				h.subtype = h.add(Kind{Name: "Object", Coarse: CoarseObjects})
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
		kind := Kind{Name: names[c], Coarse: jscCoarse(names[c]), Skip: names[c] == "<root>"}
		if obj {
			kind = Kind{Name: names[c], Coarse: CoarseObjects}
		}
		h.kindOf[k] = h.add(kind)
	}
	return h
}

// jscCoarse is the coarse type of a class's cells that are not objects.
func jscCoarse(class string) CoarseKind {
	switch {
	case class == "string": // JSString, ropes included
		return CoarseStrings
	case strings.HasSuffix(class, "Executable"), strings.HasSuffix(class, "CodeBlock"):
		return CoarseScripts
	}
	return CoarseOther
}

type jscHeap struct {
	s       *jscsnapshot.Snapshot
	kinds   []Kind
	kindOf  []int32 // by 2×class index, +1 for objects; -1 if absent
	subtype int32   // the kind of ObjectSubtype nodes; -1 if there are none
}

func (h *jscHeap) add(k Kind) int32 {
	h.kinds = append(h.kinds, k)
	return int32(len(h.kinds) - 1)
}

func (h *jscHeap) NodeCount() int { return h.s.NodeCount() }
func (h *jscHeap) Kinds() []Kind  { return h.kinds }

func (h *jscHeap) Nodes(start int, dst []Node) {
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
		dst[j] = Node{Size: s.SelfSize(i), Kind: k}
	}
}

func (h *jscHeap) ClassName(i int) (string, bool) { return h.s.ClassName(i), h.s.IsObject(i) }

// Stack reports no stacks: JSC records no allocation sites.
func (h *jscHeap) Stack(uint32) ([]heapsnapshot.Frame, bool) { return nil, false }
