package heapsnapshot

import (
	"bytes"
	"runtime"
	"slices"
	"sync"
)

// parallel is whether records reads long runs of integers on two cores.
var parallel = runtime.GOMAXPROCS(0) > 1

// parallelMin is how much buffered input makes records read it in two
// halves concurrently: enough that starting a goroutine costs nothing.
const parallelMin = 128 << 10

// parallel reads the run of plain integers at the start of the buffered
// input in two halves, the second on another goroutine, each storing its
// whole records itself; the records that straddle the cut and the run's
// start are put together here. If anything in the run is not plain (a
// space, a long integer, a bad record), parallel stores nothing, and the
// run is left to the careful path, which finds what it is.
func (s *scanner) parallel(r *recordReader) error {
	n := r.n
	b := s.buf[:s.end]
	run := b[s.pos : s.end-intRoom]
	if i := bytes.IndexByte(run, ']'); i >= 0 {
		run = run[:i]
	}
	run = run[:bytes.LastIndexByte(run, ',')+1] // whole integers only
	cut := len(run) / 2
	cut += bytes.IndexByte(run[cut:], ',') + 1
	start, mid, end := s.pos, s.pos+cut, s.pos+len(run)
	count0, count1 := bytes.Count(b[start:mid], comma), bytes.Count(b[mid:end], comma)
	s.serialUntil = s.base + int64(end)
	if count0 < 2*n || count1 < 2*n { // too short to be worth it
		return nil
	}
	if err := r.flush(); err != nil {
		return err
	}
	g0 := r.done*n + len(r.batch) // number of the run's first integer in the array
	g1, g2 := g0+count0, g0+count0+count1
	r.out.reserve(r.done, (g2+n-1)/n)
	for i := range s.halves {
		if cap(s.halves[i]) < cap(r.batch) {
			s.halves[i] = make([]int64, cap(r.batch))
		}
	}
	var second half
	var wg sync.WaitGroup
	wg.Go(func() { second = readHalf(b, mid, end, g1, n, s.halves[1][:cap(r.batch)], r.out.put) })
	first := readHalf(b, start, mid, g0, n, s.halves[0][:cap(r.batch)], r.out.put)
	wg.Wait()
	if !first.ok || !second.ok {
		return nil
	}
	// The records across the run's start and across the cut.
	if g0%n != 0 {
		if err := r.out.put(append(r.batch, first.head...), g0/n); err != nil {
			return err
		}
	}
	if g1%n != 0 {
		if err := r.out.put(append(first.tail, second.head...), g1/n); err != nil {
			return err
		}
	}
	r.done, r.batch = g2/n, append(r.batch[:0], second.tail...)
	s.pos = end
	return nil
}

var comma = []byte{','}

// half is what readHalf read.
type half struct {
	head, tail []int64 // the integers of the partial records at either end
	ok         bool
}

// readHalf reads b[start:end], plain integers each followed by a comma (as
// scanInts reads them), the first of them integer number g of an array of
// records of n integers. It stores the whole records with put, batching
// them in batch, and returns the integers of the partial records at either
// end. ok is false if anything in b[start:end] is not plain or put fails.
func readHalf(b []byte, start, end, g, n int, batch []int64, put func([]int64, int) error) half {
	var h half
	p := start
	if k := (n - g%n) % n; k > 0 {
		h.head = make([]int64, k)
		var got int
		if p, got = scanInts(b, p, end, h.head, 0); got < k {
			return h
		}
		g += k
	}
	for first := g / n; ; {
		var k int
		p, k = scanInts(b, p, end, batch, 0)
		whole := k / n * n
		if whole > 0 {
			if put(batch[:whole], first) != nil {
				return h
			}
			first += whole / n
		}
		if k < len(batch) {
			h.tail = slices.Clone(batch[whole:k])
			h.ok = p == end
			return h
		}
	}
}
