package heapsnapshot

import (
	"math"
	"math/bits"
	"slices"
	"sync"
)

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
