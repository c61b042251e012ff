package report

import (
	"io"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// endless reads c forever, counting what it gave.
type endless struct {
	c    byte
	read int64
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.c
	}
	e.read += int64(len(p))
	return len(p), nil
}

// Issue 28, finding 6: input is checked as it streams in. A reader of
// zeros that never ends (/dev/zero) is refused at its first byte, having
// been read one buffer's worth; one of whitespace, which is valid JSON
// padding, when it passes the limit.
func TestReadInputBounded(t *testing.T) {
	zeros := &endless{c: 0}
	_, err := ReadInput(zeros, MaxInput)
	assert.Check(t, is.ErrorContains(err, `not JSON: invalid character '\x00' looking for beginning of value (byte 0)`))
	assert.Check(t, zeros.read <= 4096, "read %d bytes", zeros.read)

	spaces := &endless{c: ' '}
	_, err = ReadInput(io.MultiReader(strings.NewReader("["), spaces), 1<<20)
	assert.Check(t, is.ErrorContains(err, "larger than 1 MiB, the most wdext report reads (--max-input)"))
	assert.Check(t, spaces.read <= 1<<20+4096, "read %d bytes", spaces.read)

	for in, want := range map[string]string{
		" {\"value\": [1, 2]}\n": "",
		"{} {}":                  "not JSON: more than one value",
		"{\"a\": 1":              "not JSON: unexpected EOF",
		"":                       "not JSON: unexpected EOF",
		"{\"a\": \x00}":          "invalid character '\\x00' looking for beginning of value (byte 6)",
	} {
		data, err := ReadInput(strings.NewReader(in), MaxInput)
		if want == "" {
			assert.Check(t, err, in)
			assert.Check(t, is.Equal(string(data), strings.TrimSpace(in)))
			continue
		}
		assert.Check(t, is.ErrorContains(err, want), "%q", in)
	}
}
