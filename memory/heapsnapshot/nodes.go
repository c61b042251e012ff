package heapsnapshot

import "math"

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
