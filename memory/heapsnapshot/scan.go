package heapsnapshot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// A scanner is a minimal JSON tokenizer over a stream. It exists because the
// bulk of a snapshot is a few huge arrays of small integers, which
// encoding/json's Decoder would turn into one interface value per token.
// Every token reader consumes input incrementally, so a token may straddle
// buffer refills and the buffer never has to grow.
type scanner struct {
	r    io.Reader
	buf  []byte
	pos  int   // next unread byte
	end  int   // end of valid data in buf
	base int64 // input offset of buf[0], for error messages
	err  error // sticky: io.EOF at end of input, or the reader's error
	full bool  // the last read filled buf

	// While recording, consumed bytes from buf[recFrom:] are kept in rec, so
	// a small value (the "snapshot" header) can be handed to encoding/json.
	recording bool
	recFrom   int
	rec       []byte

	scratch []byte     // string decoding buffer, reused
	batch   []int64    // records' batch, reused
	halves  [2][]int64 // parallel's batches, reused
	arena   arena      // the bytes of the strings read

	// serialUntil is the input offset before which records reads
	// serially: parallel has looked at the input up to there.
	serialUntil int64
}

const (
	bufSize       = 64 << 10        // to begin with
	maxBufSize    = 1<<20 + bufSize // reads of a whole MB at least: see more
	maxHeaderSize = 1 << 20         // the "snapshot" header is a few KB in practice
	maxDepth      = 4096            // V8 records at most 64 frames per allocation stack
)

func newScanner(r io.Reader) *scanner {
	return &scanner{r: r, buf: make([]byte, bufSize)}
}

// errorf reports malformed input at the current position.
func (s *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("heapsnapshot: at byte %d: %s", s.base+int64(s.pos), fmt.Sprintf(format, args...))
}

// eofError is the error for input that ended (or failed) too early.
func (s *scanner) eofError() error {
	if s.err != nil && s.err != io.EOF {
		return fmt.Errorf("heapsnapshot: reading: %w", s.err)
	}
	return fmt.Errorf("heapsnapshot: at byte %d: %w", s.base+int64(s.pos), io.ErrUnexpectedEOF)
}

// more reads more input, keeping buf[pos:end]. It returns false at end of
// input or on a read error (s.err tells which).
func (s *scanner) more() bool {
	if s.err != nil {
		return false
	}
	if s.recording {
		s.rec = append(s.rec, s.buf[s.recFrom:s.pos]...)
		s.recFrom = 0
		if len(s.rec) > maxHeaderSize {
			s.err = errors.New("snapshot header too large")
			return false
		}
	}
	buf := s.buf
	if s.full && len(buf) < maxBufSize {
		// The reader fills what it is given: read more at a time, enough
		// for parallel, and for reading past a bufio.Reader's buffer.
		buf = make([]byte, maxBufSize)
	}
	n := copy(buf, s.buf[s.pos:s.end])
	s.buf = buf
	s.base += int64(s.pos)
	s.pos, s.end = 0, n
	// Readers may return 0, nil; give up after many in a row, as bufio does,
	// rather than spin forever.
	for range 100 {
		m, err := s.r.Read(s.buf[s.end:])
		if m < 0 || m > len(s.buf)-s.end {
			s.err = errors.New("invalid Read count")
			return false
		}
		s.end += m
		s.full = s.end == len(s.buf)
		if err != nil {
			s.err = err
			return m > 0
		}
		if m > 0 {
			return true
		}
	}
	s.err = io.ErrNoProgress
	return false
}

// peek skips whitespace and returns the next byte without consuming it.
func (s *scanner) peek() (byte, error) {
	for {
		for s.pos < s.end {
			c := s.buf[s.pos]
			if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
				return c, nil
			}
			s.pos++
		}
		if !s.more() {
			return 0, s.eofError()
		}
	}
}

// expect consumes the next non-space byte, which must be c.
func (s *scanner) expect(c byte) error {
	got, err := s.peek()
	if err != nil {
		return err
	}
	if got != c {
		return s.errorf("want %q, got %q", c, got)
	}
	s.pos++
	return nil
}

// atEOF reports whether only whitespace remains.
func (s *scanner) atEOF() error {
	_, err := s.peek()
	if err == nil {
		return s.errorf("data after the top-level object")
	}
	if s.err == io.EOF {
		return nil
	}
	return err
}

// integer reads a JSON integer. Fractions and exponents are rejected: V8
// writes every number in the snapshot body as an integer.
func (s *scanner) integer() (int64, error) {
	if v, ok := s.fastInteger(); ok {
		return v, nil
	}
	c, err := s.peek()
	if err != nil {
		return 0, err
	}
	neg := c == '-'
	if neg {
		s.pos++
	}
	var v uint64
	nd := 0
	first := byte(0)
	for {
		// Fast path: digits already in the buffer.
		b, p := s.buf[:s.end], s.pos
		for p < len(b) {
			d := b[p] - '0'
			if d > 9 {
				break
			}
			if nd == 0 {
				first = b[p]
			}
			v = v*10 + uint64(d)
			nd++
			p++
		}
		s.pos = p
		if p < len(b) || !s.more() {
			break
		}
	}
	switch {
	case nd == 0:
		if s.pos == s.end {
			return 0, s.eofError()
		}
		return 0, s.errorf("want an integer, got %q", s.buf[s.pos])
	case nd > 18: // cannot overflow below this, and no field needs more
		return 0, s.errorf("integer out of range")
	case first == '0' && nd > 1:
		return 0, s.errorf("integer with a leading zero")
	}
	if s.pos < s.end {
		if c := s.buf[s.pos]; c == '.' || c == 'e' || c == 'E' {
			return 0, s.errorf("want an integer, got a fraction or exponent")
		}
	}
	if neg {
		return -int64(v), nil
	}
	return int64(v), nil
}

// openArray reads a JSON array's opening bracket, and its closing one
// too when the array is empty.
func (s *scanner) openArray() (empty bool, err error) {
	if err := s.expect('['); err != nil {
		return false, err
	}
	c, err := s.peek()
	if err != nil || c != ']' {
		return false, err
	}
	s.pos++
	return true, nil
}

// separator reads the separator after an element or member: true past a
// comma, false past the closing bracket; anything else is an error naming
// the container.
func (s *scanner) separator(closing byte, container string) (bool, error) {
	c, err := s.peek()
	if err != nil {
		return false, err
	}
	switch c {
	case ',':
		s.pos++
		return true, nil
	case closing:
		s.pos++
		return false, nil
	}
	return false, s.errorf("want ',' or '%c' in %s, got %q", closing, container, c)
}

// array reads a JSON array, calling elem with the scanner positioned at each
// element, which elem must consume.
func (s *scanner) array(elem func() error) error {
	if empty, err := s.openArray(); empty || err != nil {
		return err
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		more, err := s.separator(']', "array")
		if !more || err != nil {
			return err
		}
	}
}

// fastInteger reads a non-negative integer wholly in the buffer, which is
// nearly every one. It consumes nothing and returns false on anything
// unusual (short buffer, sign, fraction, 19 digits...), for the slow path.
func (s *scanner) fastInteger() (int64, bool) {
	p := s.pos
	if s.end-p <= 19 {
		return 0, false
	}
	b := s.buf[p : p+20]
	if b[0] == '0' {
		if c := b[1]; (c < '0' || c > '9') && c != '.' && c != 'e' && c != 'E' {
			s.pos = p + 1
			return 0, true
		}
		return 0, false
	}
	if d := b[0] - '1'; d < 9 {
		v := uint64(d) + 1
		i := 1
		for ; i < 19; i++ {
			d := b[i] - '0'
			if d > 9 {
				break
			}
			v = v*10 + uint64(d)
		}
		if c := b[i]; i < 19 && c != '.' && c != 'e' && c != 'E' {
			s.pos = p + i
			return int64(v), true
		}
	}
	return 0, false
}

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

// object reads a JSON object, calling member for each key with the scanner
// positioned at the value, which member must consume.
func (s *scanner) object(member func(key string) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	c, err := s.peek()
	if err != nil {
		return err
	}
	if c == '}' {
		s.pos++
		return nil
	}
	for {
		key, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		more, err := s.separator('}', "object")
		if !more || err != nil {
			return err
		}
	}
}

// strings reads a JSON array of strings, calling f with each.
func (s *scanner) strings(f func(string)) error {
	if empty, err := s.openArray(); empty || err != nil {
		return err
	}
	for {
		// Fast path: strings wholly in the buffer, each followed by a
		// comma (and maybe a newline).
		b, p := s.buf[:s.end], s.pos
		for p < len(b) && b[p] == '"' {
			v, q, ok := strAt(b, p, &s.scratch)
			if !ok || q+1 >= len(b) || b[q] != ',' {
				break
			}
			f(s.arena.keep(v))
			if p = q + 1; b[p] == '\n' {
				p++
			}
		}
		s.pos = p
		// The rest, one string and its separator at a time.
		v, err := s.str()
		if err != nil {
			return err
		}
		f(v)
		more, err := s.separator(']', "array")
		if !more || err != nil {
			return err
		}
	}
}

// strAt decodes the JSON string at b[p], which is '"', as str does, if it
// ends in b. It returns its bytes (b's own, or decoded into *scratch),
// where it ends, and false if it doesn't end in b or is not valid.
func strAt(b []byte, p int, scratch *[]byte) ([]byte, int, bool) {
	q := p + 1
	for ; q < len(b); q++ {
		if c := b[q]; c == '"' {
			return b[p+1 : q], q + 1, true
		} else if c == '\\' || c < 0x20 {
			break
		}
	}
	out := append((*scratch)[:0], b[p+1:q]...)
	defer func() { *scratch = out[:0] }()
	for q < len(b) {
		c := b[q]
		switch {
		case c == '"':
			return out, q + 1, true
		case c < 0x20:
			return nil, 0, false
		case c != '\\':
			out = append(out, c)
			q++
			continue
		}
		if q+1 >= len(b) {
			return nil, 0, false
		}
		e := b[q+1]
		q += 2
		if c, ok := unescape1(e); ok {
			out = append(out, c)
			continue
		}
		switch e {
		case 'u':
			if q+4 > len(b) {
				return nil, 0, false
			}
			r, ok := unhex4(b[q : q+4])
			if !ok {
				return nil, 0, false
			}
			q += 4
			if utf16.IsSurrogate(r) {
				// As str does.
				dec := utf8.RuneError
				if q+6 <= len(b) && b[q] == '\\' && b[q+1] == 'u' {
					if r2, ok := unhex4(b[q+2 : q+6]); ok {
						if dec = utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							q += 6
						}
					}
				}
				r = dec
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// str reads a JSON string. Unescaped bytes are kept as they are (V8 writes
// UTF-8); escapes are decoded as encoding/json does, with unpaired
// surrogates becoming U+FFFD.
func (s *scanner) str() (string, error) {
	if err := s.expect('"'); err != nil {
		return "", err
	}
	// Fast path: the whole string is in the buffer and has no escapes.
	for i := s.pos; i < s.end; i++ {
		c := s.buf[i]
		if c == '"' {
			v := s.arena.keep(s.buf[s.pos:i])
			s.pos = i + 1
			return v, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	out := s.scratch[:0]
	defer func() { s.scratch = out[:0] }()
	for {
		if s.pos == s.end && !s.more() {
			return "", s.eofError()
		}
		c := s.buf[s.pos]
		switch {
		case c == '"':
			s.pos++
			return s.arena.keep(out), nil
		case c < 0x20:
			return "", s.errorf("control character in string")
		case c != '\\':
			out = append(out, c)
			s.pos++
			continue
		}
		s.pos++
		e, err := s.byteAt()
		if err != nil {
			return "", err
		}
		if c, ok := unescape1(e); ok {
			out = append(out, c)
			continue
		}
		switch e {
		case 'u':
			r, err := s.hex4()
			if err != nil {
				return "", err
			}
			if utf16.IsSurrogate(r) {
				// Like encoding/json: a valid pair is one rune; otherwise this
				// escape is U+FFFD and the next one is decoded on its own.
				dec := utf8.RuneError
				if r2, ok := s.peekU4(); ok {
					dec = utf16.DecodeRune(r, r2)
					if dec != utf8.RuneError {
						s.pos += 6
					}
				}
				r = dec
			}
			out = utf8.AppendRune(out, r)
		default:
			s.pos--
			return "", s.errorf("invalid escape %q", e)
		}
	}
}

// unescape1 is the byte a one-character JSON escape (\n, \", …) stands
// for, and whether e is one.
func unescape1(e byte) (byte, bool) {
	switch e {
	case '"', '\\', '/':
		return e, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// An arena keeps strings' bytes (see keep).
type arena []byte

// keep returns b as a string. Small strings are copied into a shared
// block rather than allocated one by one: a snapshot has hundreds of
// thousands of them, and the blocks are never written again once a string
// points into them.
func (a *arena) keep(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > cap(*a)-len(*a) {
		if len(b) > maxArena/8 {
			return string(b)
		}
		*a = make([]byte, 0, max(min(2*cap(*a), maxArena), 4<<10, len(b)))
	}
	n := len(*a)
	*a = append(*a, b...)
	return unsafe.String(&(*a)[n], len(b))
}

// maxArena is the size of keep's blocks once they have grown.
const maxArena = 1 << 20

// byteAt consumes one byte, without skipping whitespace.
func (s *scanner) byteAt() (byte, error) {
	if s.pos == s.end && !s.more() {
		return 0, s.eofError()
	}
	c := s.buf[s.pos]
	s.pos++
	return c, nil
}

// lookingAt reports whether the input continues with lit, consuming nothing.
func (s *scanner) lookingAt(lit string) bool {
	if !s.ensure(len(lit)) {
		return false
	}
	return string(s.buf[s.pos:s.pos+len(lit)]) == lit
}

// ensure tries to have n unread bytes in the buffer.
func (s *scanner) ensure(n int) bool {
	for s.end-s.pos < n {
		if !s.more() {
			return false
		}
	}
	return true
}

// peekU4 decodes a \uXXXX escape at the current position without consuming it.
func (s *scanner) peekU4() (rune, bool) {
	if !s.ensure(6) || s.buf[s.pos] != '\\' || s.buf[s.pos+1] != 'u' {
		return 0, false
	}
	return unhex4(s.buf[s.pos+2 : s.pos+6])
}

func (s *scanner) hex4() (rune, error) {
	if !s.ensure(4) {
		return 0, s.eofError()
	}
	r, ok := unhex4(s.buf[s.pos : s.pos+4])
	if !ok {
		return 0, s.errorf("invalid \\u escape")
	}
	s.pos += 4
	return r, nil
}

// unhex4 decodes four hex digits.
func unhex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// skip consumes any JSON value without keeping it, validating it as it goes.
func (s *scanner) skip(depth int) error {
	if depth > maxDepth {
		return s.errorf("nesting deeper than %d", maxDepth)
	}
	c, err := s.peek()
	if err != nil {
		return err
	}
	switch c {
	case '{':
		return s.object(func(string) error { return s.skip(depth + 1) })
	case '[':
		return s.array(func() error {
			// Runs of plain integers, the bulk of "locations", in one go.
			s.pos = skipInts(s.buf[:s.end], s.pos, s.end-intRoom)
			return s.skip(depth + 1)
		})
	case '"':
		return s.skipString()
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	}
	return s.number()
}

// skipString is str without building the value.
func (s *scanner) skipString() error {
	if err := s.expect('"'); err != nil {
		return err
	}
	for {
		c, err := s.byteAt()
		if err != nil {
			return err
		}
		switch {
		case c == '"':
			return nil
		case c < 0x20:
			s.pos--
			return s.errorf("control character in string")
		case c == '\\':
			e, err := s.byteAt()
			if err != nil {
				return err
			}
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if _, err := s.hex4(); err != nil {
					return err
				}
			default:
				s.pos--
				return s.errorf("invalid escape %q", e)
			}
		}
	}
}

func (s *scanner) literal(lit string) error {
	if !s.lookingAt(lit) {
		if s.end-s.pos < len(lit) {
			return s.eofError()
		}
		return s.errorf("invalid literal")
	}
	s.pos += len(lit)
	return nil
}

// number consumes a JSON number of any form (samples and locations are
// skipped, and a future V8 might write fractions there).
func (s *scanner) number() error {
	// States of the JSON number grammar.
	const (
		start = iota
		sign
		zero
		intDigits
		dot
		fracDigits
		exp
		expSign
		expDigits
	)
	// Fast path: a plain integer, as in nearly all of "locations" and
	// "samples".
	if _, ok := s.fastInteger(); ok {
		return nil
	}
	state := start
	for {
		if s.pos == s.end && !s.more() {
			if s.err != io.EOF {
				return s.eofError()
			}
			break
		}
		c := s.buf[s.pos]
		next := -1
		isDigit := '0' <= c && c <= '9'
		switch state {
		case start:
			switch {
			case c == '-':
				next = sign
			case c == '0':
				next = zero
			case isDigit:
				next = intDigits
			}
		case sign:
			switch {
			case c == '0':
				next = zero
			case isDigit:
				next = intDigits
			}
		case zero, intDigits:
			switch {
			case isDigit && state == intDigits:
				next = intDigits
			case c == '.':
				next = dot
			case c == 'e' || c == 'E':
				next = exp
			}
		case dot, fracDigits:
			switch {
			case isDigit:
				next = fracDigits
			case c == 'e' || c == 'E':
				if state == fracDigits {
					next = exp
				}
			}
		case exp:
			switch {
			case c == '+' || c == '-':
				next = expSign
			case isDigit:
				next = expDigits
			}
		case expSign, expDigits:
			if isDigit {
				next = expDigits
			}
		}
		if next < 0 {
			break
		}
		state = next
		s.pos++
	}
	switch state {
	case zero, intDigits, fracDigits, expDigits:
		return nil
	}
	if s.pos == s.end {
		return s.eofError()
	}
	return s.errorf("invalid value starting or continuing with %q", s.buf[s.pos])
}

// startRecording begins keeping consumed input; the caller must be
// positioned before the value to record, with whitespace already skipped.
func (s *scanner) startRecording() {
	s.recording, s.recFrom, s.rec = true, s.pos, s.rec[:0]
}

// stopRecording returns the bytes consumed since startRecording.
func (s *scanner) stopRecording() []byte {
	s.rec = append(s.rec, s.buf[s.recFrom:s.pos]...)
	s.recording = false
	return s.rec
}
