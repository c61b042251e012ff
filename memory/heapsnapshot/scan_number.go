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
