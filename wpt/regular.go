package wpt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// errNotRegular is why a path is refused that names a device, a FIFO or a
// socket (also through a symlink): the server never opens one, so it
// cannot be made to read /dev/zero into memory or to wait forever on a
// FIFO that has no writer.
var errNotRegular = errors.New("not a regular file")

// maxBuffered bounds what the server holds in memory for one response:
// a file it rewrites (a .sub. file, pipe=sub, a kind's document hook),
// the output of a substitution, a wrapper's .js source. Everything else
// streams from the file.
const maxBuffered = 32 << 20

// maxHeadersFile bounds a .headers or .sub.headers file.
const maxHeadersFile = 1 << 20

// openRegular opens name (following symlinks) if it is a regular file,
// and only then: anything else is an error wrapping errNotRegular before
// any open. The open does not block (O_NONBLOCK), and what it opened is
// checked again, should the name have been replaced meanwhile by a FIFO
// or a device.
func openRegular(name string) (*os.File, fs.FileInfo, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fi, &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
	}
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
		}
		return nil, fi, err
	}
	return f, fi, nil
}

// readRegular reads the regular file name whole, refusing one larger than
// limit bytes before reading it.
func readRegular(name string, limit int64) ([]byte, error) {
	f, fi, err := openRegular(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, fi.Size(), limit, name)
}

// readLimited reads r, a file of size bytes, up to limit bytes: a file
// larger than limit (or one that grew past it) is an error naming it.
func readLimited(r io.Reader, size, limit int64, name string) ([]byte, error) {
	if size > limit {
		return nil, tooLarge(name, size, limit)
	}
	buf := make([]byte, 0, size+1) // +1: EOF without growing
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if int64(len(buf)) > limit {
			return nil, tooLarge(name, int64(len(buf)), limit)
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grew since the stat
		}
	}
}

func tooLarge(name string, size, limit int64) error {
	return fmt.Errorf("%s: %d bytes, more than the %d MiB wdext's WPT server holds in memory", name, size, limit>>20)
}

// ctxReader reads r until ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
