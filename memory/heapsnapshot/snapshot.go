package heapsnapshot

import (
	"iter"
	"math"

	"github.com/wdext/wdext/wire"
)

// Snapshot is a parsed heap snapshot. Nodes are numbered 0..NodeCount()-1
// in file order (node 0 is V8's synthetic root); edges are numbered
// 0..TotalEdges()-1 and grouped by the node they leave. A Snapshot is
// read-only and safe for concurrent use.
type Snapshot struct {
	nodeTypes []string // meta.node_types[0]
	edgeTypes []string // meta.edge_types[0]
	strings   []string

	// One column per node field that is kept.
	nodeType []uint8
	nodeName []uint32 // index into strings
	nodeID   []uint32
	nodeSize []int64 // nil when nodeSize32 holds the sizes
	// Read keeps self sizes in 32 bits: nodeSize32[i] is node i's, or
	// MaxUint32 for one of 2^32-1 bytes or more, which bigSizes has.
	nodeSize32 []uint32
	bigSizes   map[int]int64
	nodeTrace  []uint32 // nil when the snapshot has no trace_node_id field
	nodeDet    []uint8  // nil when the snapshot has no detachedness field
	firstEdge  []uint32 // NodeCount()+1 entries: node i owns [firstEdge[i], firstEdge[i+1])

	edgeType []uint8
	edgeName []uint32 // string index, or element/hidden index
	edgeTo   []uint32 // node ordinal (the file's to_node / len(node_fields))

	// edgeIsIndex[t] tells whether edges of type t carry a number rather
	// than a string index ("element" and "hidden" in V8).
	edgeIsIndex []bool

	// Allocation traces, when the snapshot was taken while tracking.
	funcName     []uint32 // string index
	funcScript   []uint32 // string index
	funcScriptID []uint32
	funcLine     []uint32
	funcColumn   []uint32

	traceFunc   []uint32 // index into func*
	traceParent []int32  // -1 for top-level trace nodes
	traceIndex  map[uint32]int32
}

// NodeCount returns the number of nodes.
func (s *Snapshot) NodeCount() int { return len(s.nodeType) }

// TotalEdges returns the number of edges in the snapshot.
func (s *Snapshot) TotalEdges() int { return len(s.edgeType) }

// NodeTypes returns the node type names from the snapshot's meta, indexed by
// TypeIndex. The caller must not modify it.
func (s *Snapshot) NodeTypes() []string { return s.nodeTypes }

// TypeIndex returns the index of node i's type in NodeTypes.
func (s *Snapshot) TypeIndex(i int) int { return int(s.nodeType[i]) }

// Type returns node i's type name, such as "object" or "closure".
func (s *Snapshot) Type(i int) string { return s.nodeTypes[s.nodeType[i]] }

// Name returns node i's name. Its meaning depends on the type: the
// constructor name for "object", the function name for "closure", the
// contents for "string", the source for "regexp".
func (s *Snapshot) Name(i int) string { return s.strings[s.nodeName[i]] }

// ID returns node i's heap object id, stable across snapshots of one
// session and usable with HeapProfiler.getObjectByHeapObjectId.
func (s *Snapshot) ID(i int) uint32 { return s.nodeID[i] }

// SelfSize returns the bytes node i uses directly.
func (s *Snapshot) SelfSize(i int) int64 {
	if s.nodeSize32 == nil {
		return s.nodeSize[i]
	}
	if v := s.nodeSize32[i]; v != math.MaxUint32 {
		return int64(v)
	}
	return s.bigSizes[i]
}

// EdgeCount returns the number of edges leaving node i.
func (s *Snapshot) EdgeCount(i int) int { return int(s.firstEdge[i+1] - s.firstEdge[i]) }

// TraceNodeID returns the allocation trace node id of node i, or 0 when the
// snapshot has none for it (allocation tracking was off, or the object was
// allocated before it started).
func (s *Snapshot) TraceNodeID(i int) uint32 {
	if s.nodeTrace == nil {
		return 0
	}
	return s.nodeTrace[i]
}

// Detachedness returns V8's detachedness of node i: 0 unknown, 1
// attached to a document, 2 detached (a DOM node, or its wrapper, that no
// document holds). Snapshots without the field (older V8) say 0.
func (s *Snapshot) Detachedness(i int) uint8 {
	if s.nodeDet == nil {
		return 0
	}
	return s.nodeDet[i]
}

// ClassName returns the JavaScript class of node i and whether node i is a
// JavaScript object at all. V8 names "object" nodes after their
// constructor, so that name is the class; functions ("closure" nodes, named
// after the function) are "Function" and regular expressions ("regexp"
// nodes, named after their source) are "RegExp". V8's "array" nodes are
// internal backing stores (FixedArray and friends), not JavaScript arrays,
// which are "object" nodes named "Array"; so they are not objects here.
func (s *Snapshot) ClassName(i int) (string, bool) {
	switch s.Type(i) {
	case "object":
		return s.Name(i), true
	case "closure":
		return "Function", true
	case "regexp":
		return "RegExp", true
	}
	return "", false
}

// Edge is one edge of the graph.
type Edge struct {
	Type  string // "context", "element", "property", "internal", "hidden", "shortcut", "weak"
	Name  string // property or variable name; "" for Index edges
	Index int    // element or slot index for "element" and "hidden" edges; -1 otherwise
	To    int    // the node the edge points to
}

// Edges returns the edges leaving node i (none from ReadNodes).
func (s *Snapshot) Edges(i int) iter.Seq[Edge] {
	return func(yield func(Edge) bool) {
		if len(s.edgeType) == 0 {
			return // ReadNodes kept none
		}
		for e := s.firstEdge[i]; e < s.firstEdge[i+1]; e++ {
			if !yield(s.edge(int(e))) {
				return
			}
		}
	}
}

// EdgeOf returns edge number k of node i, counting as Edges yields them.
func (s *Snapshot) EdgeOf(i, k int) Edge { return s.edge(int(s.firstEdge[i]) + k) }

// EdgeRange returns the snapshot-wide numbers of node i's edges, lo up
// to hi, in the order Edges yields them: what EdgeAt and EdgeTo take.
func (s *Snapshot) EdgeRange(i int) (lo, hi int) {
	if len(s.edgeType) == 0 {
		return 0, 0 // ReadNodes kept none
	}
	return int(s.firstEdge[i]), int(s.firstEdge[i+1])
}

// EdgeAt returns the edge of snapshot-wide number e (see EdgeRange).
func (s *Snapshot) EdgeAt(e int) Edge { return s.edge(e) }

// EdgeTo returns the node that edge number e points to, without making
// its Edge.
func (s *Snapshot) EdgeTo(e int) int { return int(s.edgeTo[e]) }

func (s *Snapshot) edge(e int) Edge {
	t := s.edgeType[e]
	ed := Edge{Type: s.edgeTypes[t], Index: -1, To: int(s.edgeTo[e])}
	if s.edgeIsIndex[t] {
		ed.Index = int(s.edgeName[e])
	} else {
		ed.Name = s.strings[s.edgeName[e]]
	}
	return ed
}

// Stack returns the allocation stack of trace node id, youngest frame
// first, and whether id names a trace node. The top-level trace node is
// V8's synthetic "(root)"; it stands for an empty stack and yields an empty,
// non-nil slice.
func (s *Snapshot) Stack(id uint32) ([]wire.Frame, bool) {
	t, ok := s.traceIndex[id]
	if !ok {
		return nil, false
	}
	frames := []wire.Frame{}
	for ; s.traceParent[t] >= 0; t = s.traceParent[t] {
		f := s.traceFunc[t]
		frames = append(frames, wire.Frame{
			FunctionDisplayName: s.strings[s.funcName[f]],
			Source:              s.strings[s.funcScript[f]],
			SourceID:            int(s.funcScriptID[f]),
			Line:                int(s.funcLine[f]),
			Column:              int(s.funcColumn[f]),
		})
	}
	return frames, true
}
