package heapsnapshot

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// A Builder makes a Snapshot in V8's vocabulary from a heap graph another
// engine described (package memory/leaks reads JavaScriptCore's this
// way), so that what works on V8 snapshots works on it. Its node and edge
// types are V8's (NodeTypes, EdgeTypes). The zero Builder is ready; node
// 0, the first added, is the root.
type Builder struct {
	s       Snapshot
	strings map[string]uint32
	edges   []builtEdge
}

type builtEdge struct {
	from, to uint32
	typ      uint8
	name     uint32
}

// The node and edge types of a built snapshot, V8's.
var (
	NodeTypes = []string{"hidden", "array", "string", "object", "code", "closure", "regexp", "number", "native", "synthetic", "concatenated string", "sliced string", "symbol", "bigint", "object shape"}
	EdgeTypes = []string{"context", "element", "property", "internal", "hidden", "shortcut", "weak"}
)

// Node adds a node of type typ (one of NodeTypes) and returns its
// ordinal.
func (b *Builder) Node(typ, name string, id uint32, size int64, detachedness uint8) (int, error) {
	t := slices.Index(NodeTypes, typ)
	if t < 0 {
		return 0, fmt.Errorf("heapsnapshot: node type %q is not V8's", typ)
	}
	s := &b.s
	s.nodeType = append(s.nodeType, uint8(t))
	s.nodeName = append(s.nodeName, b.str(name))
	s.nodeID = append(s.nodeID, id)
	s.nodeSize = append(s.nodeSize, size)
	s.nodeDet = append(s.nodeDet, detachedness)
	return len(s.nodeType) - 1, nil
}

// Edge adds an edge of type typ (one of EdgeTypes) from node from to node
// to, named name, or numbered index for "element" and "hidden" edges.
// Edges may be added in any order; a node's keep the order they came in.
func (b *Builder) Edge(from int, typ, name string, index int, to int) error {
	t := slices.Index(EdgeTypes, typ)
	n := len(b.s.nodeType)
	switch {
	case t < 0:
		return fmt.Errorf("heapsnapshot: edge type %q is not V8's", typ)
	case from < 0 || from >= n || to < 0 || to >= n:
		return fmt.Errorf("heapsnapshot: edge %d → %d of %d nodes", from, to, n)
	case typ == "element" || typ == "hidden":
		if index < 0 || int64(index) > math.MaxUint32 {
			return fmt.Errorf("heapsnapshot: %s edge index %d out of range", typ, index)
		}
		b.edges = append(b.edges, builtEdge{uint32(from), uint32(to), uint8(t), uint32(index)})
	default:
		b.edges = append(b.edges, builtEdge{uint32(from), uint32(to), uint8(t), b.str(name)})
	}
	return nil
}

func (b *Builder) str(v string) uint32 {
	if b.strings == nil {
		b.strings = map[string]uint32{}
	}
	k, ok := b.strings[v]
	if !ok {
		k = uint32(len(b.s.strings))
		b.s.strings = append(b.s.strings, v)
		b.strings[v] = k
	}
	return k
}

// Snapshot returns the snapshot built; the Builder must not be used
// after.
func (b *Builder) Snapshot() *Snapshot {
	s := &b.s
	s.nodeTypes, s.edgeTypes = NodeTypes, EdgeTypes
	s.edgeIsIndex = make([]bool, len(EdgeTypes))
	for i, t := range EdgeTypes {
		s.edgeIsIndex[i] = t == "element" || t == "hidden"
	}
	slices.SortStableFunc(b.edges, func(x, y builtEdge) int { return cmp.Compare(x.from, y.from) })
	n := len(s.nodeType)
	s.firstEdge = make([]uint32, n+1)
	s.edgeType = make([]uint8, len(b.edges))
	s.edgeName = make([]uint32, len(b.edges))
	s.edgeTo = make([]uint32, len(b.edges))
	for k, e := range b.edges {
		s.firstEdge[e.from+1]++
		s.edgeType[k], s.edgeName[k], s.edgeTo[k] = e.typ, e.name, e.to
	}
	for i := range n {
		s.firstEdge[i+1] += s.firstEdge[i]
	}
	b.edges, b.strings = nil, nil
	return s
}
