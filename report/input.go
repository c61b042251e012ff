package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxInput is ReadInput's default bound: far above what wdext writes (a
// test's attachments stop at 32 MB of JSON, a census is kilobytes), and
// small enough that a report of it fits in a few hundred megabytes.
const MaxInput = 64 << 20

// ReadInput reads the one JSON value r holds, checking it as it streams
// in, as wdext census and wdext leaks read snapshots: input that is not
// JSON (a binary file, /dev/zero) is refused at its first bad byte, and
// input larger than limit bytes once it passes limit, whatever the reader
// (a file that never ends, standard input). Whitespace may surround the
// value, nothing else.
func ReadInput(r io.Reader, limit int64) ([]byte, error) {
	lr := &io.LimitedReader{R: r, N: limit + 1}
	tooLarge := func() error {
		return fmt.Errorf("larger than %s, the most wdext report reads (--max-input)", byteCount(limit))
	}
	dec := json.NewDecoder(lr)
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		var se *json.SyntaxError
		switch {
		case lr.N <= 0:
			return nil, tooLarge()
		case errors.As(err, &se):
			return nil, fmt.Errorf("not JSON: %w (byte %d)", err, se.Offset-1) // Offset counts the bad byte
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("not JSON: %w", io.ErrUnexpectedEOF)
		}
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if lr.N <= 0 {
			return nil, tooLarge()
		}
		return nil, errors.New("not JSON: more than one value")
	}
	return raw, nil
}

func byteCount(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
