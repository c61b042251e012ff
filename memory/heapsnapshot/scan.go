package heapsnapshot

import (
	"errors"
	"fmt"
	"io"
)

// A scanner is a minimal JSON tokenizer over a stream. It exists because the
// bulk of a snapshot is a few huge arrays of small integers, which
// encoding/json's Decoder would turn into one interface value per token.
// Every token reader consumes input incrementally, so a token may straddle
// buffer refills and the buffer never has to grow.
//
// This file has the buffer and the containers; numbers and strings are
// read in scan_number.go and scan_string.go, the integer records of
// "nodes" and "edges" in records.go (and parallel.go, on two cores).
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
