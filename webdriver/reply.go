package webdriver

import (
	"bytes"
	"net/http"

	"github.com/wdext/wdext/wire"
)

// bufferedReply captures a reply so it can be inspected before sending.
type bufferedReply struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedReply) Header() http.Header { return b.header }
func (b *bufferedReply) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}
func (b *bufferedReply) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *bufferedReply) writeTo(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	w.WriteHeader(b.status)
	w.Write(b.body.Bytes())
}

// sessionEndWatch passes a proxied reply through and notes whether it is
// the driver's "invalid session id" (a 404 whose body says so; the first
// bytes of a 404 are kept to read it, nothing else is).
type sessionEndWatch struct {
	statusRecorder
	head []byte
}

// maxWatched is how much of a 404 reply is kept: the error code comes
// first in every driver's envelope.
const maxWatched = 4 << 10

func (w *sessionEndWatch) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.status == http.StatusNotFound && len(w.head) < maxWatched {
		w.head = append(w.head, p[:min(len(p), maxWatched-len(w.head))]...)
	}
	return w.ResponseWriter.Write(p)
}

func (w *sessionEndWatch) ended() bool {
	if w.status != http.StatusNotFound {
		return false
	}
	if e, ok := wire.ParseError(w.head); ok {
		return e.Code == wire.InvalidSessionID
	}
	return bytes.Contains(w.head, []byte(`"invalid session id"`))
}
