package heapsnapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
)

// Read parses a V8 heap snapshot from r as it arrives. It needs the
// "snapshot" header (meta) before "nodes", "edges" and the trace arrays, as
// V8 writes it; "strings" may come anywhere. Unknown top-level keys are
// skipped. Malformed or truncated input yields an error.
//
// Read stops at the first error without draining r: a caller feeding an
// io.Pipe should CloseWithError the reading end so the writer is released.
//
// Read buffers what it reads itself, in large blocks: a bufio.Reader in
// front only adds a copy. When r has a Stat method, as an *os.File does,
// the file's size lets Read trust the header's node count further, and
// make the columns their full size at once instead of growing them.
func Read(r io.Reader) (*Snapshot, error) { return read(r, false) }

// ReadNodes is Read for a caller that only looks at nodes, a census: it
// checks the edges as Read does but keeps none of them, which is about half
// of what Read keeps (9 bytes an edge, and V8 writes over two edges a
// node). The Snapshot's TotalEdges is 0 and Edges yields nothing;
// EdgeCount still tells how many edges the file gave each node.
func ReadNodes(r io.Reader) (*Snapshot, error) { return read(r, true) }

func read(r io.Reader, nodesOnly bool) (*Snapshot, error) {
	d := &decoder{sc: newScanner(r), s: &Snapshot{}, seen: map[string]bool{}, nodesOnly: nodesOnly}
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			d.size = fi.Size()
		}
	}
	if err := d.sc.object(d.member); err != nil {
		return nil, err
	}
	if err := d.sc.atEOF(); err != nil {
		return nil, err
	}
	if err := d.finish(); err != nil {
		return nil, fmt.Errorf("heapsnapshot: %w", err)
	}
	return d.s, nil
}

// A layout says where each named field sits in a flat record, per meta's
// node_fields, edge_fields and so on.
type layout struct {
	n  int            // fields per record
	at map[string]int // position of each field
}

func newLayout(fields []string, what string, want ...string) (layout, error) {
	l := layout{n: len(fields), at: map[string]int{}}
	for i, f := range fields {
		if _, dup := l.at[f]; dup {
			return layout{}, fmt.Errorf("%s lists %q twice", what, f)
		}
		l.at[f] = i
	}
	for _, f := range want {
		if _, ok := l.at[f]; !ok {
			return layout{}, fmt.Errorf("%s lacks %q", what, f)
		}
	}
	return l, nil
}

// header is the "snapshot" value; it is small, so encoding/json parses it.
type header struct {
	Meta struct {
		NodeFields              []string          `json:"node_fields"`
		NodeTypes               []json.RawMessage `json:"node_types"`
		EdgeFields              []string          `json:"edge_fields"`
		EdgeTypes               []json.RawMessage `json:"edge_types"`
		TraceFunctionInfoFields []string          `json:"trace_function_info_fields"`
		TraceNodeFields         []string          `json:"trace_node_fields"`
	} `json:"meta"`
	NodeCount *float64 `json:"node_count"`
	EdgeCount *float64 `json:"edge_count"`
}

type decoder struct {
	sc   *scanner
	s    *Snapshot
	seen map[string]bool

	haveHeader            bool
	nodeCount, edgeCount  int64 // declared; -1 if absent
	node, edge, fn, trace layout
	fnErr, traceErr       error // reported only if the array is non-empty
	traceIDs              []uint32
	maxName               atomic.Uint32 // the highest string index nodes and edges use
	// With nodesOnly, edges are checked and counted but not kept;
	// edgeToEnd and nameEnd are one past the highest target and string
	// index they use, for finish to check.
	nodesOnly          bool
	edgesRead          int
	edgeToEnd, nameEnd atomic.Uint64
	size               int64      // the input's size, if known; else 0
	bigMu              sync.Mutex // guards s.bigSizes
}

// Preallocation trusts the header's counts only this far (or as far as the
// input's size allows, if Read knows it), so a lying header cannot make a
// tiny input allocate gigabytes; past it, slices grow. The
// edges' columns are made when "edges" starts, and trust the header's
// count further if "nodes" came first: up to edgesPerNode a node read
// (V8 writes about 2.2), which is still proportional to the input.
const (
	maxPreNodes  = 1 << 21
	maxPreEdges  = 1 << 23
	edgesPerNode = 16
)

func (d *decoder) member(key string) error {
	switch key {
	case "snapshot", "nodes", "edges", "trace_function_infos", "trace_tree", "strings":
		if d.seen[key] {
			return d.sc.errorf("duplicate %q", key)
		}
		d.seen[key] = true
		if key != "snapshot" && key != "strings" && !d.haveHeader {
			return d.sc.errorf("%q before the snapshot header", key)
		}
	}
	switch key {
	case "snapshot":
		return d.header()
	case "nodes":
		return d.nodes()
	case "edges":
		return d.edges()
	case "trace_function_infos":
		return d.funcs()
	case "trace_tree":
		return d.traceNodes(-1, 0)
	case "strings":
		return d.strings()
	}
	return d.sc.skip(0)
}

func (d *decoder) header() error {
	if _, err := d.sc.peek(); err != nil {
		return err
	}
	d.sc.startRecording()
	err := d.sc.skip(0)
	raw := d.sc.stopRecording()
	if err != nil {
		return err
	}
	if len(raw) > maxHeaderSize {
		return d.sc.errorf("snapshot header too large")
	}
	var h header
	if err := json.Unmarshal(raw, &h); err != nil {
		return fmt.Errorf("heapsnapshot: snapshot header: %w", err)
	}
	if err := d.setHeader(&h); err != nil {
		return fmt.Errorf("heapsnapshot: snapshot header: %w", err)
	}
	d.haveHeader = true
	return nil
}

func (d *decoder) setHeader(h *header) error {
	m := &h.Meta
	var err error
	if d.s.nodeTypes, err = typeNames(m.NodeTypes, "node_types"); err != nil {
		return err
	}
	if d.s.edgeTypes, err = typeNames(m.EdgeTypes, "edge_types"); err != nil {
		return err
	}
	d.s.edgeIsIndex = make([]bool, len(d.s.edgeTypes))
	for i, t := range d.s.edgeTypes {
		d.s.edgeIsIndex[i] = t == "element" || t == "hidden"
	}
	if d.node, err = newLayout(m.NodeFields, "node_fields", "type", "name", "id", "self_size", "edge_count"); err != nil {
		return err
	}
	if d.edge, err = newLayout(m.EdgeFields, "edge_fields", "type", "name_or_index", "to_node"); err != nil {
		return err
	}
	d.fn, d.fnErr = newLayout(m.TraceFunctionInfoFields, "trace_function_info_fields", "name", "script_name", "script_id", "line", "column")
	d.trace, d.traceErr = newLayout(m.TraceNodeFields, "trace_node_fields", "id", "function_info_index", "children")

	d.nodeCount, err = count(h.NodeCount, "node_count")
	if err != nil {
		return err
	}
	d.edgeCount, err = count(h.EdgeCount, "edge_count")
	if err != nil {
		return err
	}
	// A node takes at least "0," per field.
	n := int(min(max(d.nodeCount, 0), max(maxPreNodes, d.size/int64(2*d.node.n))))
	s := d.s
	s.nodeType, s.nodeName, s.nodeID = column[uint8](n), column[uint32](n), column[uint32](n)
	s.nodeSize32, s.firstEdge = column[uint32](n), column[uint32](n + 1)[:1]
	if _, ok := d.node.at["trace_node_id"]; ok {
		s.nodeTrace = column[uint32](n)
	}
	if _, ok := d.node.at["detachedness"]; ok {
		s.nodeDet = column[uint8](n)
	}
	return nil
}

// typeNames returns the first element of meta's node_types or edge_types,
// the list of type names that the type field indexes.
func typeNames(raw []json.RawMessage, what string) ([]string, error) {
	var names []string
	if len(raw) == 0 || json.Unmarshal(raw[0], &names) != nil {
		return nil, fmt.Errorf("%s[0] is not a list of names", what)
	}
	if len(names) > math.MaxUint8+1 {
		return nil, fmt.Errorf("%s[0] has %d names, more than %d", what, len(names), math.MaxUint8+1)
	}
	return names, nil
}

func count(f *float64, what string) (int64, error) {
	if f == nil {
		return -1, nil
	}
	if *f < 0 || *f > math.MaxUint32 || *f != math.Trunc(*f) {
		return 0, fmt.Errorf("bad %s %v", what, *f)
	}
	return int64(*f), nil
}

// u32 reports whether all of vs fit in a uint32.
func u32(vs ...int64) bool {
	for _, v := range vs {
		if uint64(v) > math.MaxUint32 {
			return false
		}
	}
	return true
}

// room is the capacity for at least need entries a column of the given
// capacity grows to. The header's count is trusted once the input has
// shown a quarter of it, so a column of the declared size is copied once,
// not over and over.
func room(capacity, need int, declared int64) int {
	if need <= capacity {
		return capacity
	}
	if declared >= int64(need) && declared <= 4*int64(need) {
		return int(declared)
	}
	return max(need, 2*capacity)
}

// grown returns col with capacity c and its first n entries.
func grown[T uint8 | uint32 | int64](col []T, n, c int) []T {
	return append(column[T](c), col[:n]...)
}

// column makes an empty column of capacity c.
func column[T uint8 | uint32 | int64](c int) []T { return make([]T, 0, c) }

// The columns are filled through sinks: records stores each batch at its
// place, possibly out of order and concurrently (scanner.parallel), in the
// columns' spare capacity, and the lengths are set at the end.

func (d *decoder) nodes() error {
	s, l := d.s, d.node
	nf := l.n
	iType, iName, iID, iSize, iEdges := l.at["type"], l.at["name"], l.at["id"], l.at["self_size"], l.at["edge_count"]
	iTrace, hasTrace := l.at["trace_node_id"]
	iDet, hasDet := l.at["detachedness"]
	if !hasTrace {
		iTrace = iID // read, but not kept
	}
	if !hasDet {
		iDet = iType
	}
	ntypes := uint64(len(s.nodeTypes))
	n, err := d.sc.records(nf, sink{
		reserve: func(have, need int) {
			c := room(cap(s.nodeType), need, d.nodeCount)
			if c == cap(s.nodeType) {
				return
			}
			s.nodeType, s.nodeName, s.nodeID = grown(s.nodeType, have, c), grown(s.nodeName, have, c), grown(s.nodeID, have, c)
			s.nodeSize32, s.firstEdge = grown(s.nodeSize32, have, c), grown(s.firstEdge, have+1, c+1)
			if hasTrace {
				s.nodeTrace = grown(s.nodeTrace, have, c)
			}
			if hasDet {
				s.nodeDet = grown(s.nodeDet, have, c)
			}
		},
		put: func(batch []int64, i0 int) error {
			k := len(batch) / nf
			typ, name, id := s.nodeType[i0:i0+k], s.nodeName[i0:i0+k], s.nodeID[i0:i0+k]
			size, edges := s.nodeSize32[i0:i0+k], s.firstEdge[i0+1:i0+1+k]
			var maxName uint32
			defer func() { d.raiseMaxName(maxName) }()
			for j := range k {
				rec := batch[j*nf : j*nf+nf]
				// One test for the usual record, the careful ones if it fails.
				if uint64(rec[iType]) >= ntypes || uint64(rec[iName]|rec[iID]|rec[iEdges]|rec[iTrace]|rec[iSize]) > math.MaxUint32 ||
					uint64(rec[iDet]) > math.MaxUint8 {
					if err := d.badNode(i0+j, rec, ntypes); err != nil {
						return err
					}
				}
				typ[j] = uint8(rec[iType])
				name[j] = uint32(rec[iName])
				maxName = max(maxName, name[j])
				id[j] = uint32(rec[iID])
				if size[j] = uint32(rec[iSize]); rec[iSize] >= math.MaxUint32 {
					size[j] = math.MaxUint32
					d.bigSize(i0+j, rec[iSize])
				}
				// Counts for now; finish turns them into offsets.
				edges[j] = uint32(rec[iEdges])
			}
			if hasTrace {
				trace := s.nodeTrace[i0 : i0+k]
				for j := range k {
					trace[j] = uint32(batch[j*nf+iTrace])
				}
			}
			if hasDet {
				det := s.nodeDet[i0 : i0+k]
				for j := range k {
					det[j] = uint8(batch[j*nf+iDet])
				}
			}
			return nil
		},
	})
	if err != nil {
		return err
	}
	s.nodeType, s.nodeName, s.nodeID = s.nodeType[:n], s.nodeName[:n], s.nodeID[:n]
	s.nodeSize32, s.firstEdge = s.nodeSize32[:n], s.firstEdge[:n+1]
	if hasTrace {
		s.nodeTrace = s.nodeTrace[:n]
	}
	if hasDet {
		s.nodeDet = s.nodeDet[:n]
	}
	return nil
}

// bigSize keeps node i's self_size, which is too large for nodeSize32.
// Records are checked concurrently; and a record that parallel stored
// before giving up on its run may be stored again, so the last value
// kept is the one that counts.
func (d *decoder) bigSize(i int, size int64) {
	d.bigMu.Lock()
	defer d.bigMu.Unlock()
	if d.s.bigSizes == nil {
		d.s.bigSizes = map[int]int64{}
	}
	d.s.bigSizes[i] = size
}

// raiseMaxName makes d.maxName at least x.
func (d *decoder) raiseMaxName(x uint32) { raise(&d.maxName, x) }

// raise makes *a at least x.
func raise[T uint32 | uint64, A interface {
	Load() T
	CompareAndSwap(old, new T) bool
}](a A, x T) {
	for {
		m := a.Load()
		if x <= m || a.CompareAndSwap(m, x) {
			return
		}
	}
}

// badNode checks node i's record the careful way: it returns the error for
// a record that is out of range, nil for one that only has a large
// self_size.
func (d *decoder) badNode(i int, rec []int64, ntypes uint64) error {
	l := d.node
	iType, iName, iID, iSize, iEdges := l.at["type"], l.at["name"], l.at["id"], l.at["self_size"], l.at["edge_count"]
	iTrace, hasTrace := l.at["trace_node_id"]
	iDet, hasDet := l.at["detachedness"]
	switch {
	case uint64(rec[iType]) >= ntypes:
		return d.sc.errorf("node %d: type %d out of range", i, rec[iType])
	case rec[iSize] < 0:
		return d.sc.errorf("node %d: negative self_size", i)
	case !u32(rec[iName], rec[iID], rec[iEdges]) || hasTrace && !u32(rec[iTrace]):
		return d.sc.errorf("node %d: field out of range", i)
	case hasDet && uint64(rec[iDet]) > math.MaxUint8:
		return d.sc.errorf("node %d: detachedness %d out of range", i, rec[iDet])
	}
	return nil
}

func (d *decoder) edges() error {
	s, l := d.s, d.edge
	ef := l.n
	iType, iName, iTo := l.at["type"], l.at["name_or_index"], l.at["to_node"]
	ntypes := uint64(len(s.edgeTypes))
	nf := uint64(d.node.n)
	// to_node / nf by a multiplication: for a 32-bit to_node, the high
	// word of to_node × ⌈2^64/nf⌉ is the quotient (Lemire, Kaser and
	// Kurz, "Faster remainder by direct computation", 2019). nf ≥ 5, as
	// node_fields has at least the five fields Read needs.
	inv := ^uint64(0)/nf + 1
	// nameMask keeps the names that are string indices.
	var nameMask [256]uint32
	for t, isIndex := range s.edgeIsIndex {
		if !isIndex {
			nameMask[t] = math.MaxUint32
		}
	}
	keep := !d.nodesOnly
	if keep {
		e := int(min(max(d.edgeCount, 0), max(maxPreEdges, edgesPerNode*int64(len(s.nodeType)))))
		s.edgeType, s.edgeName, s.edgeTo = column[uint8](e), column[uint32](e), column[uint32](e)
	}
	n, err := d.sc.records(ef, sink{
		reserve: func(have, need int) {
			if !keep {
				return
			}
			if c := room(cap(s.edgeType), need, d.edgeCount); c > cap(s.edgeType) {
				s.edgeType, s.edgeName, s.edgeTo = grown(s.edgeType, have, c), grown(s.edgeName, have, c), grown(s.edgeTo, have, c)
			}
		},
		put: func(batch []int64, e0 int) error {
			k := len(batch) / ef
			typ, name, to, release := d.edgeColumns(e0, k, &nameMask)
			defer release()
			var maxName uint32
			defer func() { d.raiseMaxName(maxName) }()
			for j := range k {
				rec := batch[j*ef : j*ef+ef]
				t, nm, x := uint64(rec[iType]), uint64(rec[iName]), uint64(rec[iTo])
				q, _ := bits.Mul64(x, inv)
				if t >= ntypes || nm > math.MaxUint32 || x > math.MaxUint32 || x != q*nf {
					var err error
					if q, err = d.badEdge(e0+j, rec, ntypes); err != nil {
						return err
					}
				}
				typ[j] = uint8(t)
				name[j] = uint32(nm)
				to[j] = uint32(q)
				maxName = max(maxName, uint32(nm)&nameMask[uint8(t)])
			}
			return nil
		},
	})
	if err != nil {
		return err
	}
	d.edgesRead = n
	if keep {
		s.edgeType, s.edgeName, s.edgeTo = s.edgeType[:n], s.edgeName[:n], s.edgeTo[:n]
	}
	return nil
}

// edgeColumns returns where edges' put stores records e0..e0+k-1: the
// kept columns, or with nodesOnly scratch columns, which release bounds
// (d.edgeToEnd, d.nameEnd; nameMask tells string names) and gives back.
func (d *decoder) edgeColumns(e0, k int, nameMask *[256]uint32) (typ []uint8, name, to []uint32, release func()) {
	if s := d.s; !d.nodesOnly {
		return s.edgeType[e0 : e0+k], s.edgeName[e0 : e0+k], s.edgeTo[e0 : e0+k], func() {}
	}
	sc := edgeScratch.Get().(*scratchEdges)
	sc.typ, sc.name, sc.to = slices.Grow(sc.typ[:0], k)[:k], slices.Grow(sc.name[:0], k)[:k], slices.Grow(sc.to[:0], k)[:k]
	return sc.typ, sc.name, sc.to, func() {
		var toEnd, nameEnd uint64
		for j, t := range sc.typ {
			toEnd = max(toEnd, uint64(sc.to[j])+1)
			if nameMask[t] != 0 {
				nameEnd = max(nameEnd, uint64(sc.name[j])+1)
			}
		}
		raise(&d.edgeToEnd, toEnd)
		raise(&d.nameEnd, nameEnd)
		edgeScratch.Put(sc)
	}
}

// scratchEdges holds a batch of edges ReadNodes checks but does not keep.
type scratchEdges struct {
	typ      []uint8
	name, to []uint32
}

var edgeScratch = sync.Pool{New: func() any { return new(scratchEdges) }}

// badEdge checks edge e's record the careful way: it returns the error for
// a record that is out of range, or the target's node ordinal for one that
// only has a to_node past 32 bits.
func (d *decoder) badEdge(e int, rec []int64, ntypes uint64) (uint64, error) {
	l := d.edge
	iType, iName, iTo := l.at["type"], l.at["name_or_index"], l.at["to_node"]
	nf := int64(d.node.n)
	switch {
	case uint64(rec[iType]) >= ntypes:
		return 0, d.sc.errorf("edge %d: type %d out of range", e, rec[iType])
	case rec[iTo]%nf != 0:
		return 0, d.sc.errorf("edge %d: to_node %d is not a multiple of %d node fields", e, rec[iTo], nf)
	case !u32(rec[iName], rec[iTo]/nf):
		return 0, d.sc.errorf("edge %d: field out of range", e)
	}
	return uint64(rec[iTo] / nf), nil
}

func (d *decoder) funcs() error {
	s, l := d.s, d.fn
	iName, iScript, iScriptID, iLine, iColumn := l.at["name"], l.at["script_name"], l.at["script_id"], l.at["line"], l.at["column"]
	n, err := d.sc.records(max(l.n, 1), sink{
		reserve: func(have, need int) {
			if c := room(cap(s.funcName), need, -1); c > cap(s.funcName) {
				s.funcName, s.funcScript, s.funcScriptID = grown(s.funcName, have, c), grown(s.funcScript, have, c), grown(s.funcScriptID, have, c)
				s.funcLine, s.funcColumn = grown(s.funcLine, have, c), grown(s.funcColumn, have, c)
			}
		},
		put: func(batch []int64, f0 int) error {
			if d.fnErr != nil {
				return d.sc.errorf("%v", d.fnErr)
			}
			k := len(batch) / l.n
			name, script, scriptID := s.funcName[f0:f0+k], s.funcScript[f0:f0+k], s.funcScriptID[f0:f0+k]
			line, column := s.funcLine[f0:f0+k], s.funcColumn[f0:f0+k]
			for j := range k {
				rec := batch[j*l.n : j*l.n+l.n]
				if !u32(rec[iName], rec[iScript], rec[iScriptID], rec[iLine], rec[iColumn]) {
					return d.sc.errorf("trace function %d: field out of range", f0+j)
				}
				name[j], script[j], scriptID[j] = uint32(rec[iName]), uint32(rec[iScript]), uint32(rec[iScriptID])
				line[j], column[j] = uint32(rec[iLine]), uint32(rec[iColumn])
			}
			return nil
		},
	})
	if err != nil {
		return err
	}
	s.funcName, s.funcScript, s.funcScriptID = s.funcName[:n], s.funcScript[:n], s.funcScriptID[:n]
	s.funcLine, s.funcColumn = s.funcLine[:n], s.funcColumn[:n]
	return nil
}

// traceNodes reads a list of trace tree nodes, each a flat record of
// trace_node_fields whose "children" field is itself such a list.
func (d *decoder) traceNodes(parent int32, depth int) error {
	if depth > maxDepth {
		return d.sc.errorf("trace_tree deeper than %d", maxDepth)
	}
	s, l := d.s, d.trace
	iID, iFunc, iChildren := l.at["id"], l.at["function_info_index"], l.at["children"]
	k, cur := 0, int32(-1)
	err := d.sc.array(func() error {
		if d.traceErr != nil {
			return d.sc.errorf("%v", d.traceErr)
		}
		if k == 0 {
			if len(s.traceParent) >= math.MaxInt32 {
				return d.sc.errorf("too many trace nodes")
			}
			cur = int32(len(s.traceParent))
			s.traceParent = append(s.traceParent, parent)
			s.traceFunc = append(s.traceFunc, 0)
			d.traceIDs = append(d.traceIDs, 0)
		}
		var err error
		switch k {
		case iChildren:
			err = d.traceNodes(cur, depth+1)
		case iID, iFunc:
			var v int64
			if v, err = d.sc.integer(); err != nil {
				return err
			}
			if !u32(v) {
				return d.sc.errorf("trace node field %d out of range", v)
			}
			if k == iID {
				d.traceIDs[cur] = uint32(v)
			} else {
				s.traceFunc[cur] = uint32(v)
			}
		default:
			err = d.sc.skip(depth + 1)
		}
		if k++; k == l.n {
			k = 0
		}
		return err
	})
	if err == nil && k != 0 {
		err = d.sc.errorf("trace_tree ends inside a node")
	}
	return err
}

func (d *decoder) strings() error {
	// Appending to one slice would copy it over and over (and allocate ~5×
	// its final size); fixed-size chunks joined at the end allocate 2×.
	// When "nodes" and "edges" came first, as V8 writes them, the highest
	// string index they use is about the table's length: the first chunk
	// is that long, and usually the only one.
	const chunk = 4096
	first := chunk
	if hint := int(d.maxName.Load()) + 1; hint > 1 {
		first = min(hint+hint/64, len(d.s.nodeType)+d.edgesRead) + chunk
	}
	var chunks [][]string
	cur := make([]string, 0, first)
	err := d.sc.strings(func(v string) {
		if len(cur) == cap(cur) {
			chunks = append(chunks, cur)
			cur = make([]string, 0, chunk)
		}
		cur = append(cur, v)
	})
	if len(chunks) == 0 {
		d.s.strings = cur
		return err
	}
	chunks = append(chunks, cur)
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	d.s.strings = make([]string, 0, n)
	for _, c := range chunks {
		d.s.strings = append(d.s.strings, c...)
	}
	return err
}

// checkNames checks that the nodes' names index the ns strings.
func (s *Snapshot) checkNames(ns uint32) error {
	for i, x := range s.nodeName {
		if x >= ns {
			return fmt.Errorf("node %d: name %d out of range of %d strings", i, x, ns)
		}
	}
	return nil
}

// checkEdges checks edges [lo, hi): their targets are nodes, and their
// names index the ns strings.
func (s *Snapshot) checkEdges(lo, hi int, ns uint32) error {
	n := uint32(len(s.nodeType))
	to, name, typ := s.edgeTo[lo:hi], s.edgeName[lo:hi], s.edgeType[lo:hi]
	for e := range to {
		if to[e] >= n {
			return fmt.Errorf("edge %d: to_node %d out of range of %d nodes", lo+e, to[e], n)
		}
		if name[e] >= ns && !s.edgeIsIndex[typ[e]] {
			return fmt.Errorf("edge %d: name %d out of range of %d strings", lo+e, name[e], ns)
		}
	}
	return nil
}

// finish checks what can only be checked once everything is in: counts, and
// indices into the string table, which V8 writes last.
func (d *decoder) finish() error {
	s := d.s
	if !d.haveHeader {
		return errors.New("no snapshot header")
	}
	n := len(s.nodeType)
	if d.nodeCount >= 0 && int64(n) != d.nodeCount {
		return fmt.Errorf("%d nodes, header says %d", n, d.nodeCount)
	}
	ne := d.edgesRead
	if d.edgeCount >= 0 && int64(ne) != d.edgeCount {
		return fmt.Errorf("%d edges, header says %d", ne, d.edgeCount)
	}
	// Turn edge counts into offsets.
	var sum uint64
	for i := 1; i <= n; i++ {
		sum += uint64(s.firstEdge[i])
		if sum > uint64(ne) {
			break
		}
		s.firstEdge[i] = uint32(sum)
	}
	if sum != uint64(ne) {
		return fmt.Errorf("nodes' edge_count adds up to %d or more, but there are %d edges", sum, ne)
	}
	ns := uint32(len(s.strings))
	if d.nodesOnly {
		if end := d.edgeToEnd.Load(); end > uint64(n) {
			return fmt.Errorf("an edge's to_node %d out of range of %d nodes", end-1, n)
		}
		if end := d.nameEnd.Load(); end > uint64(ns) {
			return fmt.Errorf("an edge's name %d out of range of %d strings", end-1, ns)
		}
	}
	// The second half of the edges on another core.
	var edgeErr error
	var wg sync.WaitGroup
	kept := len(s.edgeType) // ne, or 0 with nodesOnly
	half := kept
	if kept >= 1<<16 && parallel {
		half = kept / 2
		wg.Go(func() { edgeErr = s.checkEdges(half, kept, ns) })
	}
	err := s.checkNames(ns)
	if err == nil {
		err = s.checkEdges(0, half, ns)
	}
	wg.Wait()
	if err != nil {
		return err
	}
	if edgeErr != nil {
		return edgeErr
	}
	for i := range s.funcName {
		if s.funcName[i] >= ns || s.funcScript[i] >= ns {
			return fmt.Errorf("trace function %d: string out of range of %d strings", i, ns)
		}
	}
	nf := uint32(len(s.funcName))
	s.traceIndex = make(map[uint32]int32, len(d.traceIDs))
	for t, id := range d.traceIDs {
		if s.traceFunc[t] >= nf {
			return fmt.Errorf("trace node %d: function_info_index %d out of range of %d", id, s.traceFunc[t], nf)
		}
		if _, dup := s.traceIndex[id]; dup {
			return fmt.Errorf("trace node id %d appears twice", id)
		}
		s.traceIndex[id] = int32(t)
	}
	return nil
}
