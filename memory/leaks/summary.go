package leaks

import (
	"cmp"
	"math"
	"slices"
	"sync"

	"github.com/wdext/wdext/memory/heapsnapshot"
)

// A Summary is what a leak check keeps of a snapshot it compares the
// final one with (the baseline, memlab's target): the heap object ids,
// the sizes of the collections, the timers and the total size, a small
// part of the snapshot (4 bytes a node at most), so that the snapshot
// itself can go.
type Summary struct {
	// The ids: a bitmap (bit id set) when they are dense enough for it to
	// be the smaller, as V8's are (about 3 per node, 0.4 bytes a node),
	// else a sorted list.
	dense       bool
	idBits      []uint64
	ids         []uint32  // sorted
	collections []counted // sorted by id
	bytes       int64
	maxID       uint32         // the highest heap object id
	timers      map[string]int // Blink's timers by name (timerName)
}

// counted is a collection's size in a summary.
type counted struct {
	id    uint32
	count uint32
	bytes int64
}

// collection returns the size of the collection id in the summary.
func (m *Summary) collection(id uint32) (count int, bytes int64, ok bool) {
	k, ok := slices.BinarySearchFunc(m.collections, id, func(c counted, id uint32) int { return cmp.Compare(c.id, id) })
	if !ok {
		return 0, 0, false
	}
	return int(m.collections[k].count), m.collections[k].bytes, true
}

// Summarize summarises s.
func Summarize(s *heapsnapshot.Snapshot) *Summary { return SummarizeEntries(s, nil) }

// SummarizeEntries summarises s, whose collections have the sizes the
// engine measured (see Entries) where the snapshot does not show them.
func SummarizeEntries(s *heapsnapshot.Snapshot, sizes Entries) *Summary {
	n := s.NodeCount()
	// The nodes in two halves, the second on another core.
	var parts [2]summaryPart
	var wg sync.WaitGroup
	if n >= 1<<16 {
		wg.Go(func() { parts[1].summarize(s, sizes, n/2, n) })
		parts[0].summarize(s, sizes, 0, n/2)
	} else {
		parts[0].summarize(s, sizes, 0, n)
	}
	wg.Wait()
	m := &Summary{bytes: parts[0].bytes + parts[1].bytes, collections: slices.Concat(slices.Concat(parts[0].collections, parts[1].collections)...), timers: parts[0].timers}
	for name, k := range parts[1].timers {
		m.timers[name] += k
	}
	maxID := max(parts[0].maxID, parts[1].maxID)
	m.maxID = maxID
	if m.dense = uint64(maxID) < 32*uint64(n); m.dense {
		m.idBits = make([]uint64, maxID/64+1)
		for i := range n {
			id := s.ID(i)
			m.idBits[id/64] |= 1 << (id % 64)
		}
	} else {
		m.ids = make([]uint32, n)
		for i := range n {
			m.ids[i] = s.ID(i)
		}
		if !slices.IsSorted(m.ids) {
			slices.Sort(m.ids)
		}
	}
	if !slices.IsSortedFunc(m.collections, compareCounted) {
		slices.SortFunc(m.collections, compareCounted)
	}
	return m
}

func compareCounted(a, b counted) int { return cmp.Compare(a.id, b.id) }

// summaryPart is what SummarizeEntries finds in a range of nodes.
type summaryPart struct {
	maxID uint32
	bytes int64
	// The collections, in blocks of a fixed size: there can be millions
	// ("Object" is one), and one slice would be copied as it grows.
	collections [][]counted
	timers      map[string]int
}

func (p *summaryPart) summarize(s *heapsnapshot.Snapshot, sizes Entries, lo, hi int) {
	p.timers = map[string]int{}
	for i := lo; i < hi; i++ {
		p.maxID = max(p.maxID, s.ID(i))
		p.bytes += s.SelfSize(i)
		if isTimer(s, i) {
			name, _ := timerName(s, i)
			p.timers[name]++
		}
		if kind, ok := collectionKind(s, i); ok {
			c, b := entries(s, i, kind)
			if n, ok := sizes[s.ID(i)]; ok {
				c = n
			}
			if len(p.collections) == 0 || len(p.collections[len(p.collections)-1]) == countedBlock {
				p.collections = append(p.collections, make([]counted, 0, countedBlock))
			}
			last := &p.collections[len(p.collections)-1]
			*last = append(*last, counted{s.ID(i), uint32(min(c, math.MaxUint32)), b})
		}
	}
}

// countedBlock is the size of summaryPart's blocks.
const countedBlock = 1 << 14

// Has reports whether the summarised heap had an object of heap object id
// id.
func (m *Summary) Has(id uint32) bool {
	if m.dense {
		return int(id/64) < len(m.idBits) && m.idBits[id/64]&(1<<(id%64)) != 0
	}
	_, ok := slices.BinarySearch(m.ids, id)
	return ok
}
