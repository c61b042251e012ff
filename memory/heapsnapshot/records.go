package heapsnapshot

// A sink stores the records of an array that records reads.
type sink struct {
	// reserve makes room for records 0..need-1, keeping records
	// 0..have-1, the ones stored so far.
	reserve func(have, need int)
	// put stores the len(batch)/fields records of batch, the first of
	// them record number first, after checking them. Calls for distinct
	// records may run concurrently.
	put func(batch []int64, first int) error
}

// records reads a JSON array of integers that holds records of n integers
// each, handing whole records to the sink in batches, and returns how many
// there were. Batching keeps the per-integer cost to a few byte compares;
// put works a record at a time. Large runs of plain integers already in
// the buffer are cut in two halves read concurrently (see parallel).
func (s *scanner) records(n int, out sink) (int, error) {
	if empty, err := s.openArray(); empty || err != nil {
		return 0, err
	}
	r := &recordReader{n: n, out: out}
	if cap(s.batch) < n*batchRecords {
		s.batch = make([]int64, n*batchRecords)
	}
	r.batch = s.batch[: 0 : n*batchRecords] // full means a whole number of records
	for {
		if s.end-s.pos >= parallelMin && s.base+int64(s.pos) >= s.serialUntil && parallel {
			if err := s.parallel(r); err != nil {
				return 0, err
			}
		}
		p, k := scanInts(s.buf[:s.end], s.pos, s.end-intRoom, r.batch[:cap(r.batch)], len(r.batch))
		s.pos, r.batch = p, r.batch[:k]
		if len(r.batch) == cap(r.batch) {
			if err := r.flush(); err != nil {
				return 0, err
			}
			continue
		}
		// The rest, one integer and its separator at a time.
		v, ok := s.fastInteger()
		if !ok {
			var err error
			if v, err = s.integer(); err != nil {
				return 0, err
			}
		}
		r.batch = append(r.batch, v)
		if len(r.batch) == cap(r.batch) {
			if err := r.flush(); err != nil {
				return 0, err
			}
		}
		if s.pos < s.end && s.buf[s.pos] == ',' {
			s.pos++
			continue
		}
		more, err := s.separator(']', "array")
		if err != nil {
			return 0, err
		}
		if !more {
			if len(r.batch)%n != 0 {
				return 0, s.errorf("array ends inside a record of %d integers", n)
			}
			if err := r.flush(); err != nil {
				return 0, err
			}
			return r.done, nil
		}
	}
}

// batchRecords is how many records records hands over at a time.
const batchRecords = 256

// A recordReader is the state of records.
type recordReader struct {
	n     int
	out   sink
	batch []int64 // integers read and not yet stored: records, then part of one
	done  int     // records stored
}

// flush stores the batch's whole records and keeps the rest.
func (r *recordReader) flush() error {
	k := len(r.batch) / r.n
	if k == 0 {
		return nil
	}
	r.out.reserve(r.done, r.done+k)
	if err := r.out.put(r.batch[:k*r.n], r.done); err != nil {
		return err
	}
	r.done += k
	r.batch = r.batch[:copy(r.batch, r.batch[k*r.n:])]
	return nil
}

// intRoom is how far scanInts may read past the integers it is to read:
// an integer of 18 digits and a separator of 2 bytes.
const intRoom = 24

// scanInts reads integers from b, starting at p, into dst[k:], as long as
// they start before limit (at most len(b)-intRoom) and dst has room. It
// reads only plain integers of up to 18 digits, each followed by a comma,
// or a newline and a comma (one a record, in some writers), which is
// nearly all of them, and stops before anything else, for the caller to
// read carefully. It returns where it stopped and the new length of dst.
func scanInts(b []byte, p, limit int, dst []int64, k int) (int, int) {
	for k < len(dst) && p < limit {
		v, q := uint64(b[p]-'0'), p+1
		if v > 9 || v == 0 && b[q]-'0' <= 9 {
			break
		}
		for ; q < p+18; q++ { // 18 digits at most, as in integer
			d := b[q] - '0'
			if d > 9 {
				break
			}
			v = v*10 + uint64(d)
		}
		if c := b[q]; c == ',' {
			p = q + 1
		} else if c == '\n' && b[q+1] == ',' {
			p = q + 2
		} else {
			break
		}
		dst[k] = int64(v)
		k++
	}
	return p, k
}

// skipInts is scanInts without keeping the integers: it returns where
// the run of plain integers at b[p:] that start before limit ends.
func skipInts(b []byte, p, limit int) int {
	for p < limit {
		q := p + 1
		if d := b[p] - '0'; d > 9 || d == 0 && b[q]-'0' <= 9 {
			break
		}
		for q < p+18 && b[q]-'0' <= 9 {
			q++
		}
		if c := b[q]; c == ',' {
			p = q + 1
		} else if c == '\n' && b[q+1] == ',' {
			p = q + 2
		} else {
			break
		}
	}
	return p
}
