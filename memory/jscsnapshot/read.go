package jscsnapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// Read parses a JavaScriptCore heap snapshot from r. Members may come in any
// order; unknown ones are skipped. "version", "nodes" and "nodeClassNames"
// are required; "type", if present, must be "Inspector". Malformed or
// truncated input, a node count or edge count that is not a whole number of
// records, a class index out of range and trailing data are errors.
//
// Read stops at the first error without draining r.
func Read(r io.Reader) (*Snapshot, error) {
	return read(r, false)
}

// ReadGraph is Read keeping the edges too (Snapshot.Edges), for what
// follows references (retainer paths): 9 bytes an edge are kept (about 25
// more while reading), and edges must name nodes of the snapshot, with
// types and names in range.
func ReadGraph(r io.Reader) (*Snapshot, error) {
	return read(r, true)
}

func read(r io.Reader, graph bool) (*Snapshot, error) {
	d := &decoder{dec: json.NewDecoder(r), s: &Snapshot{}, seen: map[string]bool{}, graph: graph}
	if err := d.read(); err != nil {
		return nil, fmt.Errorf("jscsnapshot: %w", err)
	}
	return d.s, nil
}

// The fields of one node and of one edge.
const (
	nodeFields = 4
	edgeFields = 4
)

type decoder struct {
	dec  *json.Decoder
	s    *Snapshot
	seen map[string]bool

	graph bool
	raw   rawEdges // the edges as the file gives them, with graph
}

func (d *decoder) read() error {
	tok, err := d.token()
	if err != nil {
		return err
	}
	if tok != json.Delim('{') {
		return errors.New("not a JSON object")
	}
	for d.dec.More() {
		tok, err := d.token()
		if err != nil {
			return err
		}
		if err := d.member(tok.(string)); err != nil {
			return err
		}
	}
	if _, err := d.token(); err != nil { // the closing brace
		return err
	}
	if _, err := d.dec.Token(); err != io.EOF {
		return errors.New("data after the snapshot")
	}
	return d.finish()
}

// token is the decoder's next token; the input may not end before the
// snapshot does.
func (d *decoder) token() (json.Token, error) {
	tok, err := d.dec.Token()
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return tok, err
}

func (d *decoder) member(key string) error {
	switch key {
	case "version", "type", "nodes", "nodeClassNames", "edges", "edgeTypes", "edgeNames":
		if d.seen[key] {
			return fmt.Errorf("duplicate %q", key)
		}
		d.seen[key] = true
	}
	var err error
	switch key {
	case "version":
		err = d.dec.Decode(&d.s.version)
		if err == nil && (d.s.version < 1 || d.s.version > 3) {
			err = fmt.Errorf("version %d is not supported (1 to 3 are)", d.s.version)
		}
	case "type":
		var typ string
		err = d.dec.Decode(&typ)
		if err == nil && typ != "Inspector" {
			err = fmt.Errorf("type %q is not supported: want an \"Inspector\" snapshot, as Heap.snapshot returns", typ)
		}
	case "nodes":
		err = d.dec.Decode(&nodes{d.s})
	case "nodeClassNames":
		err = d.dec.Decode(&d.s.classNames)
		if err == nil && d.s.classNames == nil {
			err = errors.New("nodeClassNames is not an array")
		}
	case "edges":
		err = d.dec.Decode(&edges{d.s, d.rawOrNil()})
	case "edgeTypes":
		err = d.dec.Decode(&d.s.edgeTypes)
	case "edgeNames":
		if !d.graph {
			var skip json.RawMessage
			err = d.dec.Decode(&skip)
			break
		}
		err = d.dec.Decode(&d.s.edgeNames)
	default:
		var skip json.RawMessage
		err = d.dec.Decode(&skip)
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

func (d *decoder) finish() error {
	for _, key := range []string{"version", "nodes", "nodeClassNames"} {
		if !d.seen[key] {
			return fmt.Errorf("no %q", key)
		}
	}
	s := d.s
	for i, c := range s.class {
		if int(c) >= len(s.classNames) {
			return fmt.Errorf("node %d (id %d): class index %d out of range (%d nodeClassNames)", i, s.id[i], c, len(s.classNames))
		}
	}
	s.notObject = make([]bool, len(s.classNames))
	for c, name := range s.classNames {
		s.notObject[c] = notObjectClasses[name]
	}
	if d.graph {
		return d.link()
	}
	return nil
}

func (d *decoder) rawOrNil() *rawEdges {
	if d.graph {
		return &d.raw
	}
	return nil
}

// rawEdges are the edges as the file gives them: nodes named by id.
type rawEdges struct {
	from, to []uint64
	typ      []uint8
	data     []uint32
}

// link resolves the raw edges to node ordinals, grouped by the node they
// leave, and checks their types and names.
func (d *decoder) link() error {
	s, raw := d.s, &d.raw
	ordinal := make(map[uint64]uint32, len(s.id))
	for i, id := range s.id {
		if _, dup := ordinal[id]; dup {
			return fmt.Errorf("two nodes have id %d", id)
		}
		ordinal[id] = uint32(i)
	}
	named := make([]bool, len(s.edgeTypes)) // edge types whose data indexes edgeNames
	for t, name := range s.edgeTypes {
		named[t] = name == "Property" || name == "Variable"
	}
	n := len(raw.typ)
	s.firstEdge = make([]uint32, len(s.id)+1)
	from := make([]uint32, n)
	for k := range n {
		f, ok := ordinal[raw.from[k]]
		if !ok {
			return fmt.Errorf("edge %d leaves node id %d, which is not in the snapshot", k, raw.from[k])
		}
		if int(raw.typ[k]) >= len(s.edgeTypes) {
			return fmt.Errorf("edge %d: type index %d out of range (%d edgeTypes)", k, raw.typ[k], len(s.edgeTypes))
		}
		if named[raw.typ[k]] && int(raw.data[k]) >= len(s.edgeNames) {
			return fmt.Errorf("edge %d: name index %d out of range (%d edgeNames)", k, raw.data[k], len(s.edgeNames))
		}
		from[k] = f
		s.firstEdge[f+1]++
	}
	for i := range len(s.id) {
		s.firstEdge[i+1] += s.firstEdge[i]
	}
	// A counting sort by the node an edge leaves, stable: the file's
	// order within a node is kept.
	next := slices.Clone(s.firstEdge[:len(s.id)])
	s.edgeTo = make([]uint32, n)
	s.edgeType = make([]uint8, n)
	s.edgeData = make([]uint32, n)
	for k := range n {
		to, ok := ordinal[raw.to[k]]
		if !ok {
			return fmt.Errorf("edge %d points to node id %d, which is not in the snapshot", k, raw.to[k])
		}
		j := next[from[k]]
		next[from[k]]++
		s.edgeTo[j], s.edgeType[j], s.edgeData[j] = to, raw.typ[k], raw.data[k]
	}
	s.edgeNamed = named
	d.raw = rawEdges{}
	return nil
}

// nodes decodes the "nodes" array into the snapshot's columns.
type nodes struct{ s *Snapshot }

func (n nodes) UnmarshalJSON(data []byte) error {
	s := n.s
	c := capacity(data) / nodeFields
	s.id = make([]uint64, 0, c)
	s.size = make([]int64, 0, c)
	s.class = make([]uint32, 0, c)
	s.flags = make([]Flags, 0, c)
	count, err := uints(data, "nodes", func(k int, v uint64) error {
		switch k % nodeFields {
		case 0:
			s.id = append(s.id, v)
		case 1:
			if v > math.MaxInt64 {
				return fmt.Errorf("nodes[%d]: size %d out of range", k, v)
			}
			s.size = append(s.size, int64(v))
		case 2:
			if v > math.MaxUint32 {
				return fmt.Errorf("nodes[%d]: class index %d out of range", k, v)
			}
			s.class = append(s.class, uint32(v))
		case 3:
			if v > math.MaxUint8 {
				return fmt.Errorf("nodes[%d]: flags %d out of range", k, v)
			}
			s.flags = append(s.flags, Flags(v))
		}
		return nil
	})
	if err == nil && count%nodeFields != 0 {
		err = fmt.Errorf("nodes has %d numbers, not a multiple of %d (id, size, class, flags)", count, nodeFields)
	}
	return err
}

// edges checks the "edges" array and counts the edges, keeping them in
// raw when it is not nil.
type edges struct {
	s   *Snapshot
	raw *rawEdges
}

func (e edges) UnmarshalJSON(data []byte) error {
	keep := func(int, uint64) error { return nil }
	if r := e.raw; r != nil {
		c := capacity(data) / edgeFields
		*r = rawEdges{make([]uint64, 0, c), make([]uint64, 0, c), make([]uint8, 0, c), make([]uint32, 0, c)}
		keep = func(k int, v uint64) error {
			switch k % edgeFields {
			case 0:
				r.from = append(r.from, v)
			case 1:
				r.to = append(r.to, v)
			case 2:
				if v > math.MaxUint8 {
					return fmt.Errorf("edges[%d]: type index %d out of range", k, v)
				}
				r.typ = append(r.typ, uint8(v))
			case 3:
				if v > math.MaxUint32 {
					return fmt.Errorf("edges[%d]: data %d out of range", k, v)
				}
				r.data = append(r.data, uint32(v))
			}
			return nil
		}
	}
	count, err := uints(data, "edges", keep)
	if err == nil && count%edgeFields != 0 {
		err = fmt.Errorf("edges has %d numbers, not a multiple of %d (from, to, type, data)", count, edgeFields)
	}
	e.s.edges = count / edgeFields
	return err
}

// capacity bounds the number of elements of the JSON array data, so columns
// are allocated once, never more than the input can fill.
func capacity(data []byte) int { return bytes.Count(data, []byte{','}) + 1 }

// uints calls f with the index and value of each element of data, a JSON
// array of non-negative integers, and returns how many there are. The
// decoder has checked the syntax of data; uints checks the values.
func uints(data []byte, what string, f func(k int, v uint64) error) (int, error) {
	i := skipSpace(data, 0)
	if i == len(data) || data[i] != '[' {
		return 0, fmt.Errorf("%s is not an array", what)
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return 0, nil
	}
	for k := 0; ; k++ {
		start := i
		var v uint64
		for ; i < len(data) && '0' <= data[i] && data[i] <= '9'; i++ {
			digit := uint64(data[i] - '0')
			if v > (math.MaxUint64-digit)/10 {
				return k, fmt.Errorf("%s[%d] is out of range", what, k)
			}
			v = v*10 + digit
		}
		if i == start || i < len(data) && (data[i] == '.' || data[i] == 'e' || data[i] == 'E') {
			return k, fmt.Errorf("%s[%d] is not a non-negative integer", what, k)
		}
		if err := f(k, v); err != nil {
			return k, err
		}
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != ',' {
			return k + 1, nil // data[i] is the closing bracket
		}
		i = skipSpace(data, i+1)
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}
