package heapsnapshot

import "math"

// nodeFields are the positions in a node record of the fields Read
// keeps. An absent trace_node_id or detachedness points at a field that is
// there (id, type), read but not kept, so that the usual record is checked
// in one test.
type nodeFields struct {
	n                                      int // fields per record
	typ, name, id, size, edges, trace, det int
	hasTrace, hasDet                       bool
}

func newNodeFields(l layout) nodeFields {
	f := nodeFields{n: l.n, typ: l.at["type"], name: l.at["name"], id: l.at["id"], size: l.at["self_size"], edges: l.at["edge_count"]}
	f.trace, f.hasTrace = l.at["trace_node_id"]
	f.det, f.hasDet = l.at["detachedness"]
	if !f.hasTrace {
		f.trace = f.id
	}
	if !f.hasDet {
		f.det = f.typ
	}
	return f
}

func (d *decoder) nodes() error {
	f := newNodeFields(d.node)
	n, err := d.sc.records(f.n, sink{
		reserve: func(have, need int) {
			if c := room(cap(d.s.nodeType), need, d.nodeCount); c != cap(d.s.nodeType) {
				d.s.resizeNodes(f, have, c)
			}
		},
		put: func(batch []int64, i0 int) error { return d.putNodes(&f, batch, i0) },
	})
	if err != nil {
		return err
	}
	s := d.s
	s.nodeType, s.nodeName, s.nodeID = s.nodeType[:n], s.nodeName[:n], s.nodeID[:n]
	s.nodeSize32, s.firstEdge = s.nodeSize32[:n], s.firstEdge[:n+1]
	if f.hasTrace {
		s.nodeTrace = s.nodeTrace[:n]
	}
	if f.hasDet {
		s.nodeDet = s.nodeDet[:n]
	}
	return nil
}

// resizeNodes gives the node columns capacity c, keeping their first
// have entries.
func (s *Snapshot) resizeNodes(f nodeFields, have, c int) {
	s.nodeType, s.nodeName, s.nodeID = grown(s.nodeType, have, c), grown(s.nodeName, have, c), grown(s.nodeID, have, c)
	s.nodeSize32, s.firstEdge = grown(s.nodeSize32, have, c), grown(s.firstEdge, have+1, c+1)
	if f.hasTrace {
		s.nodeTrace = grown(s.nodeTrace, have, c)
	}
	if f.hasDet {
		s.nodeDet = grown(s.nodeDet, have, c)
	}
}

// putNodes checks the node records of batch, nodes i0 on, and stores
// them in the columns (nodes' sink's put).
func (d *decoder) putNodes(f *nodeFields, batch []int64, i0 int) error {
	s, nf := d.s, f.n
	iType, iName, iID, iSize, iEdges, iTrace, iDet := f.typ, f.name, f.id, f.size, f.edges, f.trace, f.det
	ntypes := uint64(len(s.nodeTypes))
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
			if err := d.badNode(f, i0+j, rec, ntypes); err != nil {
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
	if f.hasTrace {
		trace := s.nodeTrace[i0 : i0+k]
		for j := range k {
			trace[j] = uint32(batch[j*nf+iTrace])
		}
	}
	if f.hasDet {
		det := s.nodeDet[i0 : i0+k]
		for j := range k {
			det[j] = uint8(batch[j*nf+iDet])
		}
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

// badNode checks node i's record the careful way: it returns the error for
// a record that is out of range, nil for one that only has a large
// self_size.
func (d *decoder) badNode(f *nodeFields, i int, rec []int64, ntypes uint64) error {
	switch {
	case uint64(rec[f.typ]) >= ntypes:
		return d.sc.errorf("node %d: type %d out of range", i, rec[f.typ])
	case rec[f.size] < 0:
		return d.sc.errorf("node %d: negative self_size", i)
	case !u32(rec[f.name], rec[f.id], rec[f.edges]) || f.hasTrace && !u32(rec[f.trace]):
		return d.sc.errorf("node %d: field out of range", i)
	case f.hasDet && uint64(rec[f.det]) > math.MaxUint8:
		return d.sc.errorf("node %d: detachedness %d out of range", i, rec[f.det])
	}
	return nil
}
