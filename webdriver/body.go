package webdriver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/wdext/wdext/wire"
	"golang.org/x/sync/semaphore"
)

// DefaultBodyTimeout is how long a request body may make no progress
// when Guard.BodyTimeout is not set.
const DefaultBodyTimeout = 30 * time.Second

// DefaultBodyMinRate is the rate a request body must keep up, on
// average, beyond its first seconds (see rateGrace), when
// Guard.BodyMinRate is not set: 64 KiB/s, half a megabit.
const DefaultBodyMinRate = 64 << 10

// The chunks of a body of unknown length (chunked) grow from minChunk to
// maxChunk: small bodies waste little, large ones waste at most one
// chunk's spare room, and nothing is ever copied to grow. A body of known
// length gets chunks of maxChunk and one of the rest: no spare room.
const (
	minChunk = 8 << 10
	maxChunk = 1 << 20
)

// errBusy is the failure to find room in the budget in time.
var errBusy = errors.New("no room for the request body")

// budget is a count of the bytes that request bodies may hold in memory
// at once, across requests: without it, every concurrent request could
// hold MaxBody. A nil budget has no limit. (x/sync's weighted semaphore
// is exactly this count, waits included.)
type budget struct {
	total int64
	sem   *semaphore.Weighted
}

func newBudget(total int64) *budget {
	if total <= 0 {
		return nil
	}
	return &budget{total: total, sem: semaphore.NewWeighted(total)}
}

// acquire takes n bytes, waiting until ctx ends for them to be free.
func (b *budget) acquire(ctx context.Context, n int64) error {
	if b == nil || n == 0 {
		return nil
	}
	if n > b.total {
		return errBusy // can never fit: no use waiting
	}
	if b.sem.Acquire(ctx, n) != nil {
		return errBusy
	}
	return nil
}

// tryAcquire takes n bytes if they are free now.
func (b *budget) tryAcquire(n int64) bool { return b == nil || b.sem.TryAcquire(n) }

func (b *budget) release(n int64) {
	if b != nil && n > 0 {
		b.sem.Release(n)
	}
}

// body is a request body read whole into memory before the handler runs,
// so that it goes upstream with a Content-Length (chromedriver refuses
// chunked requests) and no handler ever waits on a client's upload. Its
// bytes count against the budget until release.
type body struct {
	budget *budget
	// wait bounds a wait for room in the budget (see grow).
	wait time.Duration

	probe [1]byte // see bodyReader.end

	mu     sync.Mutex
	chunks [][]byte  // the unread bytes, in order
	first  [1][]byte // chunks' first backing array: most bodies are one chunk
	held   int64     // bytes of budget held
	size   int64     // bytes in chunks
}

// bodyReader reads a request body into a body, with its limits.
type bodyReader struct {
	max     int64         // MaxBody; 0 for none
	timeout time.Duration // of inactivity
	minRate int64         // bytes per second beyond timeout; 0 for none
	budget  *budget
}

// errTooSlow is a body that fell behind the minimum rate.
type errTooSlow struct {
	size    int64
	took    time.Duration
	minRate int64
}

func (e errTooSlow) Error() string {
	return fmt.Sprintf("request body too slow: %d bytes in %v, under %d bytes/s (a slow client holds room other requests' bodies need)",
		e.size, e.took.Round(time.Millisecond), e.minRate)
}

// rateGrace is how long a body may take before the minimum rate counts
// (BodyTimeout, when shorter).
const rateGrace = 5 * time.Second

// deadline is when the next read must have returned: timeout from now,
// and never later than rateGrace from start plus what size bytes are
// allowed at minRate (mod_reqtimeout's MinRate). A client that sends a
// byte now and then holds its body's room in the budget for seconds, not
// for as long as it likes, and a request waiting for that room (up to
// timeout) gets it. capped tells whether the rate set it.
func (br bodyReader) deadline(start time.Time, size int64) (at time.Time, capped bool) {
	at = time.Now().Add(br.timeout)
	if br.minRate <= 0 {
		return at, false
	}
	limit := start.Add(min(br.timeout, rateGrace) + time.Duration(float64(size)/float64(br.minRate)*float64(time.Second)))
	if limit.Before(at) {
		return limit, true
	}
	return at, false
}

// read reads r's body whole. While it reads, the connection has a read
// deadline of timeout, extended before every read: a client that stops
// sending gets an error rather than a connection held open forever. The
// deadline goes once the body is in, so that the command may take as
// long as it takes (net/http clears it too, when it starts waiting for
// the next request). The returned body, even with an error, must be
// released.
func (br bodyReader) read(w http.ResponseWriter, r *http.Request) (*body, error) {
	rc := readDeadline{rc: http.NewResponseController(w)}
	b := &body{budget: br.budget, wait: br.timeout}
	b.chunks = b.first[:0]
	src := r.Body
	if br.max > 0 {
		// MaxBytesReader also tells net/http not to read on after the
		// limit but to close the connection.
		src = http.MaxBytesReader(w, src, br.max)
	}
	known := r.ContentLength
	if br.max > 0 && known > br.max {
		return b, &http.MaxBytesError{Limit: br.max}
	}
	var last []byte // the chunk being filled
	start := time.Now()
	for {
		if len(last) == cap(last) {
			if known >= 0 && b.size == known {
				return b, br.end(&rc, src, b.probe[:])
			}
			if err := b.grow(r.Context(), br.nextChunk(known, b.size)); err != nil {
				return b, err
			}
			last = b.chunks[len(b.chunks)-1]
		}
		at, capped := br.deadline(start, b.size)
		rc.set(at)
		n, err := src.Read(last[len(last):cap(last)])
		last = last[:len(last)+n]
		b.chunks[len(b.chunks)-1] = last
		b.size += int64(n)
		if err == io.EOF {
			if len(last) == 0 {
				b.dropLast() // a chunk begun for nothing
			}
			// Any deadline is gone already: net/http cleared it when the
			// body ended. Clearing it again makes sure.
			rc.set(time.Time{})
			return b, nil
		}
		if capped && errors.Is(err, os.ErrDeadlineExceeded) {
			return b, errTooSlow{b.size, time.Since(start), br.minRate}
		}
		if err != nil {
			return b, err
		}
	}
}

// end reads the end of a body of known length, all of which is in: most
// readers say EOF with the last bytes, some only on the next read.
func (br bodyReader) end(rc *readDeadline, src io.Reader, probe []byte) error {
	rc.set(time.Now().Add(br.timeout))
	n, err := src.Read(probe)
	switch {
	case n > 0:
		return errors.New("body longer than its Content-Length")
	case err == io.EOF:
		rc.set(time.Time{})
		return nil
	case err == nil:
		return errors.New("body reader returned nothing without an error")
	}
	return err
}

// readDeadline sets the read deadline of a request's connection, if the
// ResponseWriter can (an httptest.ResponseRecorder cannot, and saying so
// costs an allocation each time).
type readDeadline struct {
	rc          *http.ResponseController
	unsupported bool
}

func (d *readDeadline) set(t time.Time) {
	if !d.unsupported {
		d.unsupported = d.rc.SetReadDeadline(t) != nil
	}
}

// nextChunk is the size of the next chunk for a body of length known
// (-1: unknown) of which size bytes are in. A small body of known length
// gets one chunk of its size at once: most bodies are, and a handler
// takes one chunk as it is (see bytes). A large one gets chunks as its
// bytes arrive, so that announcing a length holds no room that was not
// sent.
func (br bodyReader) nextChunk(known, size int64) int64 {
	if known >= 0 {
		return min(known-size, maxChunk)
	}
	n := min(max(size, minChunk), maxChunk) // doubling, up to maxChunk
	if br.max > 0 {
		n = min(n, br.max-size+1) // +1 to see an over-long body
	}
	return n
}

// grow adds an empty chunk of capacity n, once the budget has room.
// Only a body that holds none waits for it: bodies that each held some
// while waiting for more could wait for each other until all failed.
func (b *body) grow(ctx context.Context, n int64) error {
	b.mu.Lock()
	wait := b.wait
	if b.held > 0 {
		wait = 0
	}
	b.mu.Unlock()
	if !b.budget.tryAcquire(n) {
		ctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		if err := b.budget.acquire(ctx, n); err != nil {
			return err
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held += n
	b.chunks = append(b.chunks, make([]byte, 0, n))
	return nil
}

// dropLast drops the last chunk, and its room in the budget.
func (b *body) dropLast() {
	b.mu.Lock()
	n := int64(cap(b.chunks[len(b.chunks)-1]))
	b.chunks = b.chunks[:len(b.chunks)-1]
	b.held -= n
	b.mu.Unlock()
	b.budget.release(n)
}

// Read reads the unread bytes.
func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.chunks) > 0 && len(b.chunks[0]) == 0 {
		b.chunks = b.chunks[1:]
	}
	if len(b.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.chunks[0])
	b.chunks[0] = b.chunks[0][n:]
	b.size -= int64(n)
	return n, nil
}

// Close does nothing: the bytes are the guard's, released when the
// handler ends, and a handler may still want them (see ReadBody).
func (b *body) Close() error { return nil }

// bytes returns the unread bytes in one slice, and reads them. A body in
// one chunk (one of known length up to maxChunk) is returned as it is;
// several are joined, which needs room in the budget for the copy.
func (b *body) bytes(ctx context.Context) ([]byte, error) {
	if p, ok := b.whole(); ok {
		return p, nil
	}
	b.mu.Lock()
	size := b.size
	b.mu.Unlock()
	if err := b.grow(ctx, size); err != nil {
		return nil, err
	}
	b.mu.Lock()
	joined := b.chunks[len(b.chunks)-1] // grow's new chunk
	for _, c := range b.chunks[:len(b.chunks)-1] {
		joined = append(joined, c...)
	}
	// The chunks are garbage now: only the joined copy holds room.
	freed := b.held - size
	b.chunks, b.size, b.held = nil, 0, size
	b.mu.Unlock()
	b.budget.release(freed)
	return joined, nil
}

// whole returns the unread bytes, and reads them, if they are in one
// chunk (a body of known length up to maxChunk: most are). Their room in
// the budget stays held until release; a transport that sends them may
// hold them a moment longer (a driver that answered before it read them
// all).
func (b *body) whole() ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.chunks) > 1 {
		return nil, false
	}
	var p []byte
	if len(b.chunks) == 1 {
		p = b.chunks[0]
	}
	b.chunks, b.size = nil, 0
	return p, true
}

// release gives the body's room in the budget back and drops its bytes
// (a transport still sending them upstream sees the body end).
func (b *body) release() {
	b.mu.Lock()
	held := b.held
	b.chunks, b.size, b.held = nil, 0, 0
	b.mu.Unlock()
	b.budget.release(held)
}

// bodyError is the W3C error for a body that could not be read.
func bodyError(err error, timeout time.Duration) *wire.Error {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return wire.Errorf(wire.InvalidArgument, "request body exceeds the limit of %d bytes (see --max-body)", tooBig.Limit)
	case errors.Is(err, errBusy):
		// Not the client's fault, and passing: "unknown error", which
		// a client may retry, rather than "invalid argument".
		return wire.Errorf(wire.UnknownError, "wdext is busy: other request bodies fill the memory set aside for them (by default twice --max-body); retry")
	case errors.As(err, new(errTooSlow)):
		return wire.Errorf(wire.InvalidArgument, "%v", err)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return wire.Errorf(wire.InvalidArgument, "request body stalled: nothing arrived for %v", timeout)
	}
	return wire.Errorf(wire.InvalidArgument, "reading request body: %v", err)
}
