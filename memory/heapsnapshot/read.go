package heapsnapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
)

// Read parses a V8 heap snapshot from r as it arrives. It needs the
// "snapshot" header (meta) before "nodes", "edges" and the trace arrays, as
// V8 writes it; "strings" may come anywhere. Unknown top-level keys are
// skipped. Malformed or truncated input yields an error.
//
// Read stops at the first error without draining r: a caller feeding an
// io.Pipe should CloseWithError the reading end so the writer is released.
func Read(r io.Reader) (*Snapshot, error) {
	d := &decoder{sc: newScanner(r), s: &Snapshot{}, seen: map[string]bool{}}
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
}

// Preallocation trusts the header's counts only this far, so a lying header
// cannot make a tiny input allocate gigabytes; past it, slices grow.
const (
	maxPreNodes = 1 << 21
	maxPreEdges = 1 << 23
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
	n := int(min(max(d.nodeCount, 0), maxPreNodes))
	s := d.s
	s.nodeType = make([]uint8, 0, n)
	s.nodeName = make([]uint32, 0, n)
	s.nodeID = make([]uint32, 0, n)
	s.nodeSize = make([]int64, 0, n)
	s.firstEdge = make([]uint32, 1, n+1)
	if _, ok := d.node.at["trace_node_id"]; ok {
		s.nodeTrace = make([]uint32, 0, n)
	}
	if _, ok := d.node.at["detachedness"]; ok {
		s.nodeDet = make([]uint8, 0, n)
	}
	e := int(min(max(d.edgeCount, 0), maxPreEdges))
	s.edgeType = make([]uint8, 0, e)
	s.edgeName = make([]uint32, 0, e)
	s.edgeTo = make([]uint32, 0, e)
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

func (d *decoder) nodes() error {
	s, l := d.s, d.node
	iType, iName, iID, iSize, iEdges := l.at["type"], l.at["name"], l.at["id"], l.at["self_size"], l.at["edge_count"]
	iTrace, hasTrace := l.at["trace_node_id"]
	iDet, hasDet := l.at["detachedness"]
	ntypes := uint64(len(s.nodeTypes))
	return d.sc.records(l.n, func(batch []int64) error {
		for r := 0; r < len(batch); r += l.n {
			rec := batch[r : r+l.n]
			i := len(s.nodeType)
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
			s.nodeType = append(s.nodeType, uint8(rec[iType]))
			s.nodeName = append(s.nodeName, uint32(rec[iName]))
			s.nodeID = append(s.nodeID, uint32(rec[iID]))
			s.nodeSize = append(s.nodeSize, rec[iSize])
			// Counts for now; finish turns them into offsets.
			s.firstEdge = append(s.firstEdge, uint32(rec[iEdges]))
			if hasTrace {
				s.nodeTrace = append(s.nodeTrace, uint32(rec[iTrace]))
			}
			if hasDet {
				s.nodeDet = append(s.nodeDet, uint8(rec[iDet]))
			}
		}
		return nil
	})
}

func (d *decoder) edges() error {
	s, l := d.s, d.edge
	iType, iName, iTo := l.at["type"], l.at["name_or_index"], l.at["to_node"]
	ntypes := uint64(len(s.edgeTypes))
	nf := int64(d.node.n)
	return d.sc.records(l.n, func(batch []int64) error {
		for r := 0; r < len(batch); r += l.n {
			rec := batch[r : r+l.n]
			e := len(s.edgeType)
			switch {
			case uint64(rec[iType]) >= ntypes:
				return d.sc.errorf("edge %d: type %d out of range", e, rec[iType])
			case rec[iTo]%nf != 0:
				return d.sc.errorf("edge %d: to_node %d is not a multiple of %d node fields", e, rec[iTo], nf)
			case !u32(rec[iName], rec[iTo]/nf):
				return d.sc.errorf("edge %d: field out of range", e)
			}
			s.edgeType = append(s.edgeType, uint8(rec[iType]))
			s.edgeName = append(s.edgeName, uint32(rec[iName]))
			s.edgeTo = append(s.edgeTo, uint32(rec[iTo]/nf))
		}
		return nil
	})
}

func (d *decoder) funcs() error {
	s, l := d.s, d.fn
	return d.sc.records(max(l.n, 1), func(batch []int64) error {
		if d.fnErr != nil {
			return d.sc.errorf("%v", d.fnErr)
		}
		iName, iScript, iScriptID, iLine, iColumn := l.at["name"], l.at["script_name"], l.at["script_id"], l.at["line"], l.at["column"]
		for r := 0; r < len(batch); r += l.n {
			rec := batch[r : r+l.n]
			if !u32(rec[iName], rec[iScript], rec[iScriptID], rec[iLine], rec[iColumn]) {
				return d.sc.errorf("trace function %d: field out of range", len(s.funcName))
			}
			s.funcName = append(s.funcName, uint32(rec[iName]))
			s.funcScript = append(s.funcScript, uint32(rec[iScript]))
			s.funcScriptID = append(s.funcScriptID, uint32(rec[iScriptID]))
			s.funcLine = append(s.funcLine, uint32(rec[iLine]))
			s.funcColumn = append(s.funcColumn, uint32(rec[iColumn]))
		}
		return nil
	})
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
	const chunk = 4096
	var chunks [][]string
	cur := make([]string, 0, chunk)
	err := d.sc.array(func() error {
		v, err := d.sc.str()
		if len(cur) == chunk {
			chunks = append(chunks, cur)
			cur = make([]string, 0, chunk)
		}
		cur = append(cur, v)
		return err
	})
	chunks = append(chunks, cur)
	d.s.strings = make([]string, 0, len(chunks)*chunk-chunk+len(cur))
	for _, c := range chunks {
		d.s.strings = append(d.s.strings, c...)
	}
	return err
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
	ne := len(s.edgeType)
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
	for i, x := range s.nodeName {
		if x >= ns {
			return fmt.Errorf("node %d: name %d out of range of %d strings", i, x, ns)
		}
	}
	for e, to := range s.edgeTo {
		if int(to) >= n {
			return fmt.Errorf("edge %d: to_node %d out of range of %d nodes", e, to, n)
		}
		if !s.edgeIsIndex[s.edgeType[e]] && s.edgeName[e] >= ns {
			return fmt.Errorf("edge %d: name %d out of range of %d strings", e, s.edgeName[e], ns)
		}
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
