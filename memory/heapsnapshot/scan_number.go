package heapsnapshot

import "io"

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

// number consumes a JSON number of any form (samples and locations are
// skipped, and a future V8 might write fractions there): an optional
// minus, 0 or digits not starting with 0, an optional fraction, an
// optional exponent.
func (s *scanner) number() error {
	// Fast path: a plain integer, as in nearly all of "locations" and
	// "samples".
	if _, ok := s.fastInteger(); ok {
		return nil
	}
	if _, err := s.accept('-', '-'); err != nil {
		return err
	}
	zero, err := s.accept('0', '0')
	if err != nil {
		return err
	}
	if !zero {
		if err := s.digits(); err != nil {
			return err
		}
	}
	if dot, err := s.accept('.', '.'); err != nil {
		return err
	} else if dot {
		if err := s.digits(); err != nil {
			return err
		}
	}
	if exp, err := s.accept('e', 'E'); err != nil {
		return err
	} else if exp {
		if _, err := s.accept('+', '-'); err != nil {
			return err
		}
		if err := s.digits(); err != nil {
			return err
		}
	}
	return nil
}

// next returns the next byte without consuming it or skipping
// whitespace; ok is false at the end of input.
func (s *scanner) next() (c byte, ok bool, err error) {
	if s.pos == s.end && !s.more() {
		if s.err != io.EOF {
			return 0, false, s.eofError()
		}
		return 0, false, nil
	}
	return s.buf[s.pos], true, nil
}

// accept consumes the next byte if it is a or b.
func (s *scanner) accept(a, b byte) (bool, error) {
	c, ok, err := s.next()
	if !ok || c != a && c != b {
		return false, err
	}
	s.pos++
	return true, nil
}

// digits consumes one digit or more, the part of a number that must
// follow a sign, a dot or an exponent's mark.
func (s *scanner) digits() error {
	n := 0
	for {
		c, ok, err := s.next()
		if err != nil {
			return err
		}
		if !ok || c < '0' || c > '9' {
			break
		}
		s.pos++
		n++
	}
	if n > 0 {
		return nil
	}
	if s.pos == s.end {
		return s.eofError()
	}
	return s.errorf("invalid value starting or continuing with %q", s.buf[s.pos])
}
