package jscsnapshot

import "iter"

// Snapshot is a parsed JavaScriptCore heap snapshot. Nodes are numbered
// 0..NodeCount()-1 in file order; node 0 is the "<root>". A Snapshot is
// read-only and safe for concurrent use.
type Snapshot struct {
	version    int
	classNames []string
	notObject  []bool // by class index: see IsObject

	// One column per node field.
	id    []uint64
	size  []int64
	class []uint32
	flags []Flags

	edges int

	edgeTypes []string // "edgeTypes": "Internal", "Property", "Index", "Variable"
	edgeNames []string // "edgeNames"

	// The edges, kept by ReadGraph only, grouped by the node they leave:
	// node i owns [firstEdge[i], firstEdge[i+1]).
	firstEdge []uint32
	edgeTo    []uint32 // node ordinal
	edgeType  []uint8  // index into edgeTypes
	edgeData  []uint32 // index into edgeNames for named types, else the index or 0
	edgeNamed []bool   // by type: its data indexes edgeNames
}

// Edge is one reference of the heap graph.
type Edge struct {
	// Type is JSC's edge type: "Internal" (a reference JavaScript cannot
	// name), "Property", "Index" (an array element) or "Variable" (a
	// closure's or scope's variable).
	Type string
	// Name is the property or variable name; "" for other types.
	Name string
	// Index is an Index edge's index; -1 for other types.
	Index int
	// To is the node the edge points to.
	To int
}

// HasEdges reports whether the snapshot kept its edges (ReadGraph).
func (s *Snapshot) HasEdges() bool { return s.firstEdge != nil }

// Edges returns the edges leaving node i, in the file's order; none when
// the snapshot was read without them (Read).
func (s *Snapshot) Edges(i int) iter.Seq[Edge] {
	return func(yield func(Edge) bool) {
		if s.firstEdge == nil {
			return
		}
		for k := s.firstEdge[i]; k < s.firstEdge[i+1]; k++ {
			t := s.edgeType[k]
			e := Edge{Type: s.edgeTypes[t], Index: -1, To: int(s.edgeTo[k])}
			switch {
			case s.edgeNamed[t]:
				e.Name = s.edgeNames[s.edgeData[k]]
			case e.Type == "Index":
				e.Index = int(s.edgeData[k])
			}
			if !yield(e) {
				return
			}
		}
	}
}

// Flags are a node's flags, JSC's NodeFlags.
type Flags uint8

const (
	// Internal marks a cell JavaScript cannot reach: one whose Structure
	// belongs to no realm (Structure, FunctionExecutable, symbol, ...).
	Internal Flags = 1 << iota
	// ObjectSubtype marks an object of JSObject's own class, which JSC
	// names after its constructor ("Foo") or calls "Object".
	ObjectSubtype
	// ElementSubtype marks the wrapper of a DOM node (version 3).
	ElementSubtype
)

// Version returns the format version, 1 to 3.
func (s *Snapshot) Version() int { return s.version }

// NodeCount returns the number of nodes, the <root> included.
func (s *Snapshot) NodeCount() int { return len(s.id) }

// TotalEdges returns the number of edges in the snapshot.
func (s *Snapshot) TotalEdges() int { return s.edges }

// ID returns node i's identifier, which is 0 for the <root> only.
func (s *Snapshot) ID(i int) uint64 { return s.id[i] }

// SelfSize returns the bytes JSC estimates node i uses.
func (s *Snapshot) SelfSize(i int) int64 { return s.size[i] }

// ClassNames returns the snapshot's class names, indexed by ClassIndex. The
// caller must not modify it.
func (s *Snapshot) ClassNames() []string { return s.classNames }

// ClassIndex returns the index of node i's class name in ClassNames.
func (s *Snapshot) ClassIndex(i int) int { return int(s.class[i]) }

// ClassName returns node i's class name: its ClassInfo name, or its
// constructor's name for an ObjectSubtype node.
func (s *Snapshot) ClassName(i int) string { return s.classNames[s.class[i]] }

// Flags returns node i's flags.
func (s *Snapshot) Flags(i int) Flags { return s.flags[i] }

// IsInternal reports whether node i is flagged Internal.
func (s *Snapshot) IsInternal(i int) bool { return s.flags[i]&Internal != 0 }

// IsObject reports whether node i is a JavaScript object. JSC flags the
// objects of JSObject's own class ObjectSubtype; other objects (functions,
// arrays, DOM wrappers, prototypes, scopes) carry no flag, and neither do
// strings and BigInts, which JSC exempts from its Internal test, nor the
// <root>. So a node is an object if it is flagged ObjectSubtype, or is not
// Internal and of none of the classes "string", "BigInt" and "<root>".
// BigInt.prototype shares the class name "BigInt" with BigInt values and
// is therefore not counted an object; there is one per realm.
func (s *Snapshot) IsObject(i int) bool {
	f := s.flags[i]
	return f&ObjectSubtype != 0 || f&Internal == 0 && !s.notObject[s.class[i]]
}

// notObjectClasses are the classes of cells JSC doesn't flag Internal
// although they are not objects.
var notObjectClasses = map[string]bool{"<root>": true, "string": true, "BigInt": true}
