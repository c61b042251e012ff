package heap

import "github.com/wdext/wdext/wire"

// A Heap is a heap snapshot as a census reads it: nodes numbered
// 0..NodeCount()-1, each of one Kind. V8 and JSC adapt the two snapshot
// formats.
type Heap interface {
	NodeCount() int
	// Kinds returns the kinds of node, which Node.Kind indexes. The caller
	// must not modify it.
	Kinds() []Kind
	// Nodes fills dst with nodes start, start+1, ..., start+len(dst)-1.
	// A census reads nodes in bulk because a method call per node would
	// cost as much as counting it.
	Nodes(start int, dst []Node)
	// ClassName returns node i's JavaScript class and whether node i is a
	// JavaScript object at all.
	ClassName(i int) (string, bool)
	// Stack returns the allocation stack that Node.Trace id names, youngest
	// frame first, and whether id names one. An empty, non-nil stack means
	// allocated with no JavaScript running.
	Stack(id uint32) ([]wire.Frame, bool)
}

// A Kind is a kind of node: a V8 node type, or a JSC class.
type Kind struct {
	Name   string     // the internalType key; kinds may share one
	Coarse CoarseKind // the coarseType part that counts the kind
	Skip   bool       // not a heap item (a root): not counted at all
}

// CoarseKind says which part of a coarseType breakdown counts a node.
type CoarseKind uint8

const (
	CoarseOther CoarseKind = iota // the zero value: neither of the others
	CoarseObjects
	CoarseScripts
	CoarseStrings
)

// Node is what a census needs of one node besides its class.
type Node struct {
	Size  int64  // bytes the node uses directly
	Kind  int32  // index into Kinds
	Trace uint32 // allocation trace id for Stack; 0 for none
}
