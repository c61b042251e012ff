package heapsnapshot

import (
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

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
