package heapsnapshot

import (
	"errors"
	"fmt"
	"sync"
)

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
