package heapsnapshot

import (
	"errors"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"
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

	// While recording, consumed bytes from buf[recFrom:] are kept in rec, so
	// a small value (the "snapshot" header) can be handed to encoding/json.
	recording bool
	recFrom   int
	rec       []byte

	scratch []byte  // string decoding buffer, reused
	batch   []int64 // records' batch, reused
}

const (
	bufSize       = 64 << 10
	maxHeaderSize = 1 << 20 // the "snapshot" header is a few KB in practice
	maxDepth      = 4096    // V8 records at most 64 frames per allocation stack
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
	n := copy(s.buf, s.buf[s.pos:s.end])
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

// array reads a JSON array, calling elem with the scanner positioned at each
// element, which elem must consume.
func (s *scanner) array(elem func() error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	c, err := s.peek()
	if err != nil {
		return err
	}
	if c == ']' {
		s.pos++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		c, err := s.peek()
		if err != nil {
			return err
		}
		s.pos++
		switch c {
		case ',':
		case ']':
			return nil
		default:
			s.pos--
			return s.errorf("want ',' or ']' in array, got %q", c)
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

// records reads a JSON array of integers that holds records of n integers
// each, handing whole records to f in batches. Batching keeps the per-integer
// cost to a few byte compares; f works a record at a time.
func (s *scanner) records(n int, f func(batch []int64) error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	c, err := s.peek()
	if err != nil {
		return err
	}
	if c == ']' {
		s.pos++
		return nil
	}
	if cap(s.batch) < n*256 {
		s.batch = make([]int64, 0, n*256)
	}
	batch := s.batch[: 0 : n*256] // full means a whole number of records
	for {
		v, ok := s.fastInteger()
		if !ok {
			if v, err = s.integer(); err != nil {
				return err
			}
		}
		batch = append(batch, v)
		if len(batch) == cap(batch) {
			if err := f(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
		if s.pos < s.end && s.buf[s.pos] == ',' {
			s.pos++
			continue
		}
		c, err := s.peek()
		if err != nil {
			return err
		}
		s.pos++
		switch c {
		case ',':
		case ']':
			if len(batch)%n != 0 {
				return s.errorf("array ends inside a record of %d integers", n)
			}
			return f(batch)
		default:
			s.pos--
			return s.errorf("want ',' or ']' in array, got %q", c)
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
		c, err := s.peek()
		if err != nil {
			return err
		}
		s.pos++
		switch c {
		case ',':
		case '}':
			return nil
		default:
			s.pos--
			return s.errorf("want ',' or '}' in object, got %q", c)
		}
	}
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
			v := string(s.buf[s.pos:i])
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
			return string(out), nil
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
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
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
		return s.array(func() error { return s.skip(depth + 1) })
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
