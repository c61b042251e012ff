package census

import "github.com/wdext/wdext/memory/heap"

// The heap a census counts is package heap's, so that engines hand one out
// without the census or the snapshot readers.
type (
	Heap       = heap.Heap
	Kind       = heap.Kind
	CoarseKind = heap.CoarseKind
	Node       = heap.Node
)

// The coarse types a kind counts under.
const (
	CoarseOther   = heap.CoarseOther
	CoarseObjects = heap.CoarseObjects
	CoarseScripts = heap.CoarseScripts
	CoarseStrings = heap.CoarseStrings
)
