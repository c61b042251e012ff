package heapsnapshot

import (
	"encoding/json"
	"fmt"
	"math"
)

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
