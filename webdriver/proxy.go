package webdriver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/wire"
)

// Proxy forwards commands to the upstream driver unchanged: method, path,
// body, status and reply body, streamed. It changes only what the driver
// would otherwise refuse or a client would choke on: the Host header names
// the upstream, Origin is dropped, and every reply is JSON. It is an
// httputil.ReverseProxy whose hooks do just that: Rewrite aims the request,
// ModifyResponse is jsonReply, ErrorHandler is upstreamError.
type Proxy struct {
	rp  *httputil.ReverseProxy
	log *slog.Logger
}

// target is where one request goes, carried in its context.
type target struct {
	base *url.URL
	// gone, if not nil, is closed when the driver process exits.
	gone <-chan struct{}
}

type targetKey struct{}

// errDriverGone is the context cause when the driver died mid-request.
var errDriverGone = errors.New("driver process exited")

// NewProxy returns a proxy over transport; nil means driver.Transport.
func NewProxy(transport http.RoundTripper, log *slog.Logger) *Proxy {
	if transport == nil {
		transport = driver.Transport
	}
	p := &Proxy{log: log}
	p.rp = &httputil.ReverseProxy{
		Rewrite:    rewrite,
		Transport:  transport,
		BufferPool: buffers,
		// Replies of unknown length still stream: the ReverseProxy
		// flushes those at once.
		FlushInterval:  0,
		ModifyResponse: jsonReply,
		ErrorHandler:   p.upstreamError,
		// A reply cut short is the client's or the driver's doing.
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	return p
}

// rewrite aims the request at its target (see Forward). A body the Guard
// read in goes as the bytes it is, when it is one piece: the Transport
// writes head and body of a body it knows to be in memory at once.
func rewrite(pr *httputil.ProxyRequest) {
	t := pr.In.Context().Value(targetKey{}).(target)
	pr.SetURL(t.base)
	pr.Out.Host = t.base.Host
	delete(pr.Out.Header, "Origin") // canonical already: no Header.Del
	if b, ok := pr.Out.Body.(*body); ok {
		if p, ok := b.whole(); ok {
			pr.Out.Body = io.NopCloser(bytes.NewReader(p))
		}
	}
}

// bufferPool recycles the copy buffers of replies: a fresh 32 KiB buffer
// per command was most of the proxy's garbage. A bounded free list, so
// that it allocates nothing itself.
type bufferPool chan []byte

var buffers = make(bufferPool, 64)

func (p bufferPool) Get() []byte {
	select {
	case b := <-p:
		return b
	default:
		return make([]byte, 32<<10)
	}
}

func (p bufferPool) Put(b []byte) {
	select {
	case p <- b:
	default:
	}
}

// Forward sends r to base. If gone closes before the reply, the request is
// abandoned and the client gets "invalid session id": the session lived in
// a driver that no longer exists. When r's context ends (the client
// left), the request is abandoned too. The body goes with
// r.ContentLength: one of unknown length would go chunked, which
// chromedriver refuses, so the Guard reads every body in first.
func (p *Proxy) Forward(w http.ResponseWriter, r *http.Request, base *url.URL, gone <-chan struct{}) {
	ctx, cancel := untilGone(r.Context(), gone)
	defer cancel()
	ctx = context.WithValue(ctx, targetKey{}, target{base: base, gone: gone})
	p.rp.ServeHTTP(w, r.WithContext(ctx))
}

// untilGone returns ctx, cancelled with cause errDriverGone as soon as gone
// closes: a request to a dead driver must not hang. It starts no goroutine
// per request: one per driver process watches gone (see goneContext).
func untilGone(ctx context.Context, gone <-chan struct{}) (context.Context, context.CancelFunc) {
	if gone == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(goneContext(gone), func() { cancel(errDriverGone) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}

// gones maps a driver's exit channel to a context done when it closes.
var gones sync.Map // <-chan struct{} → context.Context

func goneContext(gone <-chan struct{}) context.Context {
	if c, ok := gones.Load(gone); ok {
		return c.(context.Context)
	}
	c, cancel := context.WithCancel(context.Background())
	if prev, loaded := gones.LoadOrStore(gone, c); loaded {
		cancel()
		return prev.(context.Context)
	}
	go func() { // one per driver process: ends when it exits
		<-gone
		cancel()
		gones.Delete(gone)
	}()
	return c
}

func (p *Proxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	t, _ := r.Context().Value(targetKey{}).(target)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		wire.WriteError(w, wire.Errorf(wire.InvalidArgument, "request body exceeds the limit of %d bytes (see --max-body)", tooBig.Limit))
	case errors.Is(context.Cause(r.Context()), errDriverGone) || isClosed(t.gone):
		wire.WriteError(w, wire.Errorf(wire.InvalidSessionID, "the driver process that held this session has exited"))
	case r.Context().Err() != nil:
		// The client went away; nobody reads this reply.
		w.WriteHeader(499)
	case waitClosed(t.gone, driverExitGrace):
		// A dying driver drops its connections a moment before its
		// process is reaped: the dropped connection was the first sign.
		wire.WriteError(w, wire.Errorf(wire.InvalidSessionID, "the driver process that held this session has exited"))
	default:
		p.log.Warn("upstream failed", "upstream", t.base.Redacted(), "method", r.Method, "path", r.URL.Path, "err", err)
		wire.WriteError(w, wire.Errorf(wire.UnknownError, "upstream driver %s did not answer: %v", t.base.Redacted(), err))
	}
}

// driverExitGrace is how long a failed request waits to learn whether
// the driver process is exiting.
const driverExitGrace = 750 * time.Millisecond

// waitClosed reports whether c closes within d (false for a nil c).
func waitClosed(c <-chan struct{}, d time.Duration) bool {
	if c == nil {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c:
		return true
	case <-t.C:
		return false
	}
}

func isClosed(c <-chan struct{}) bool {
	if c == nil {
		return false
	}
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// jsonReply makes every reply JSON. A driver's JSON reply passes through
// byte for byte; anything else (chromedriver's plain-text refusals, a
// grid's HTML error page) becomes an "unknown error" that quotes it.
func jsonReply(resp *http.Response) error {
	if ct := resp.Header["Content-Type"]; len(ct) == 1 && ct[0] == wire.ContentType {
		return nil // chromedriver's, as it is
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "application/json" || resp.StatusCode == http.StatusNoContent {
		resp.Header.Set("Content-Type", wire.ContentType)
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return err
	}
	if json.Valid(body) {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.Header.Set("Content-Type", wire.ContentType)
		return nil
	}
	we := wire.Errorf(wire.UnknownError, "upstream answered %s with %q: %s", resp.Status, mt, bytes.TrimSpace(body))
	wrapped, _ := json.Marshal(wire.ErrorEnvelope{Value: wire.ErrorValue{Error: string(we.Code), Message: we.Message}})
	resp.Body = io.NopCloser(bytes.NewReader(wrapped))
	resp.ContentLength = int64(len(wrapped))
	resp.Header.Set("Content-Length", fmt.Sprint(len(wrapped)))
	resp.Header.Set("Content-Type", wire.ContentType)
	if resp.StatusCode < 400 {
		resp.StatusCode = http.StatusInternalServerError
	}
	return nil
}
