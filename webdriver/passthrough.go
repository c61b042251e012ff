package webdriver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"
)

// passThrough is the proxy's way to a driver over plain HTTP/1.1: the
// handler's own goroutine writes the request, head and body in one
// write, on a pooled connection, reads the reply's head from it and
// copies the body to the client. net/http's Transport hands every request
// to a writer goroutine and every reply back from a reader goroutine (and
// writes the head and a body it does not know to be in memory in two
// writes): on a busy machine each hand-off is a thread woken, most of
// what the proxy added to a command (issue 18). The head is the one
// net/http's server parsed, written as the Transport writes what
// httputil.ReverseProxy makes of it: the same request line and headers,
// in the same order; the reply goes through the same steps as there. What
// the pass-through cannot send exactly so (an upgrade, a body of unknown
// length, https, a host name to encode) goes through the ReverseProxy.
type passThrough struct {
	dialer net.Dialer

	mu    sync.Mutex
	idle  map[string][]*upstreamConn // by address, most recently used last
	nidle int
}

// The pass-through's pool, as driver.Transport's: idle connections per
// driver and in all, and how long one may idle.
const (
	passMaxIdlePerHost = 64
	passMaxIdle        = 256
	passIdleTimeout    = 90 * time.Second
	// passMaxCopy bounds a body the pass-through reads in itself (one the
	// Guard did not read in already); a longer one streams through the
	// ReverseProxy.
	passMaxCopy = 1 << 20
	// passMaxHead bounds a reply's head, as the Transport's default.
	passMaxHead = 10 << 20
)

func newPassThrough() *passThrough {
	return &passThrough{
		dialer: net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second},
		idle:   make(map[string][]*upstreamConn),
	}
}

// aLongTimeAgo is a deadline that has passed: it wakes a blocked read or
// write at once.
var aLongTimeAgo = time.Unix(1, 0)

// passable reports whether the pass-through sends r to base byte for byte
// as the ReverseProxy and the Transport would.
func passable(r *http.Request, base *url.URL) bool {
	if base.Scheme != "http" || base.User != nil || base.Opaque != "" || !plainHost(base.Host) {
		return false
	}
	if r.Form != nil {
		return false // the ReverseProxy cleans the query of a parsed form
	}
	if r.ContentLength < 0 || len(r.TransferEncoding) > 0 || r.Trailer != nil {
		return false // a body of unknown length goes chunked
	}
	if r.ContentLength > 0 && r.Body == nil {
		return false // the Transport's error to make
	}
	if _, guarded := r.Body.(*body); r.ContentLength > passMaxCopy && !guarded {
		return false // too long to hold: it streams
	}
	if len(r.Header["Upgrade"]) > 0 || httpguts.HeaderValuesContainsToken(r.Header["Connection"], "upgrade") {
		return false // a protocol switch is the ReverseProxy's
	}
	if r.Method != "" && !httpguts.ValidHeaderFieldName(r.Method) {
		return false
	}
	for k, vv := range r.Header {
		if !httpguts.ValidHeaderFieldName(k) {
			return false
		}
		for _, v := range vv {
			if !httpguts.ValidHeaderFieldValue(v) {
				return false
			}
		}
	}
	return true
}

// forward sends r to base and its reply to w; p maps failures. r's
// context is the request's, bounded by its driver's life (Forward). It
// reports false, having done nothing, for a request it cannot send as the
// Transport would.
func (rl *passThrough) forward(p *Proxy, w http.ResponseWriter, r *http.Request, base *url.URL) bool {
	ctx := r.Context()
	headBuf := heads.Get()
	defer heads.Put(headBuf)
	head, ok := appendHead(headBuf[:0], r, base)
	if !ok {
		return false
	}
	chunks, err := requestBody(r)
	if err != nil {
		p.upstreamError(w, r, err)
		return true
	}
	addr := base.Host
	if base.Port() == "" {
		addr = net.JoinHostPort(base.Hostname(), "80")
	}
	c, resp, stop, err := rl.exchange(ctx, addr, head, chunks, r, w)
	if err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		p.upstreamError(w, r, err)
		return true
	}
	reusable := false
	defer func() {
		// Only a connection whose reply was read to its end, that the
		// driver keeps open and that no cancellation touched goes back.
		if stop() && reusable && !resp.Close && c.br.Buffered() == 0 {
			rl.put(c)
		} else {
			c.conn.Close()
		}
	}()
	if resp.StatusCode == http.StatusSwitchingProtocols {
		p.upstreamError(w, r, fmt.Errorf("backend tried to switch protocol %q when %q was requested", resp.Header.Get("Upgrade"), ""))
		return true
	}
	removeHopByHop(resp.Header)
	tail := &eofReader{r: resp.Body}
	resp.Body = tail
	if err := jsonReply(resp); err != nil {
		p.upstreamError(w, r, err)
		return true
	}
	dst := w.Header()
	for k, vv := range resp.Header {
		dst[k] = append(dst[k], vv...)
	}
	announced := len(resp.Trailer)
	if announced > 0 {
		keys := make([]string, 0, announced)
		for k := range resp.Trailer {
			keys = append(keys, k)
		}
		dst.Add("Trailer", strings.Join(keys, ", "))
	}
	w.WriteHeader(resp.StatusCode)
	// A reply of unknown length streams, as the ReverseProxy's does
	// (jsonReply made every reply JSON: none is an event stream).
	err = copyReply(w, resp.Body, resp.ContentLength == -1)
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, io.EOF) {
			p.log.Debug("reply copy failed", "upstream", base.Redacted(), "path", r.URL.Path, "err", err)
		}
		// The reply is under way: all that is left is to abort it, as
		// the ReverseProxy does (a reply recorded in memory just ends).
		if r.Context().Value(http.ServerContextKey) != nil {
			panic(http.ErrAbortHandler) // the deferred close still runs
		}
		return true
	}
	reusable = tail.eof
	if len(resp.Trailer) == 0 && resp.StatusCode != http.StatusNotFound {
		// The reply is complete: out it goes, before the bookkeeping
		// after it (the connection back to the pool, the session's end
		// of command). A 404 waits for the handler, which may end the
		// session first (see Server.forwardSession).
		http.NewResponseController(w).Flush()
	}
	if len(resp.Trailer) > 0 {
		http.NewResponseController(w).Flush() // chunked, for the trailers
	}
	if len(resp.Trailer) == announced {
		for k, vv := range resp.Trailer {
			dst[k] = append(dst[k], vv...)
		}
		return true
	}
	for k, vv := range resp.Trailer {
		for _, v := range vv {
			dst.Add(http.TrailerPrefix+k, v)
		}
	}
	return true
}

// exchange sends the request on a connection to addr and reads the
// reply's head. The connection is cut (its deadline set in the past)
// when ctx ends; stop undoes that, and reports whether it had not
// happened. A request that fails on a pooled connection before the driver
// can have acted on it is sent again, once, on a new one, when the
// Transport would: nothing of it was written, or it has no body and its
// method is idempotent and nothing of the reply came.
func (rl *passThrough) exchange(ctx context.Context, addr string, head []byte, chunks [][]byte, r *http.Request, w http.ResponseWriter) (*upstreamConn, *http.Response, func() bool, error) {
	bufs := make(net.Buffers, 0, 1+len(chunks))
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, err
		}
		c, err := rl.get(ctx, addr)
		if err != nil {
			return nil, nil, nil, err
		}
		stop := context.AfterFunc(ctx, func() { c.conn.SetDeadline(aLongTimeAgo) })
		bufs = append(append(bufs[:0], head), chunks...)
		n, err := bufs.WriteTo(c.conn)
		var resp *http.Response
		read := c.nread
		if err == nil {
			resp, err = c.readReply(r, w)
		}
		if err == nil {
			return c, resp, stop, nil
		}
		stop()
		c.conn.Close()
		retry := c.reused && attempt == 0 && ctx.Err() == nil &&
			(n == 0 || (len(chunks) == 0 && idempotent(r) && c.nread == read))
		if !retry {
			return nil, nil, nil, err
		}
	}
}

// readReply reads the reply's head, passing informational replies on to
// w as the ReverseProxy does (each head within passMaxHead).
func (c *upstreamConn) readReply(r *http.Request, w http.ResponseWriter) (*http.Response, error) {
	for {
		c.limit = c.nread + passMaxHead
		resp, err := http.ReadResponse(c.br, r)
		c.limit = -1
		if err != nil {
			if errors.Is(err, errHeadTooLarge) {
				err = errHeadTooLarge
			}
			return nil, err
		}
		code := resp.StatusCode
		if code < 100 || code > 199 || code == http.StatusSwitchingProtocols {
			return resp, nil
		}
		h := w.Header()
		for k, vv := range resp.Header {
			h[k] = vv
		}
		w.WriteHeader(code)
		clear(h)
	}
}

var errHeadTooLarge = fmt.Errorf("net/http: server response headers exceeded %d bytes; aborted", passMaxHead)

func idempotent(r *http.Request) bool {
	switch r.Method {
	case "", "GET", "HEAD", "OPTIONS", "TRACE":
		return true
	}
	_, k1 := r.Header["Idempotency-Key"]
	_, k2 := r.Header["X-Idempotency-Key"]
	return k1 || k2
}

// requestBody returns what is sent of r's body: the Guard's chunks as
// they are, or a body of known length read in.
func requestBody(r *http.Request) ([][]byte, error) {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	var chunks [][]byte
	var n int64
	if b, ok := r.Body.(*body); ok {
		chunks = b.take()
		for _, c := range chunks {
			n += int64(len(c))
		}
	} else {
		p := make([]byte, r.ContentLength)
		m, err := io.ReadFull(r.Body, p)
		n = int64(m)
		if err == nil {
			var probe [1]byte
			m, err = r.Body.Read(probe[:])
			n += int64(m)
			if err == io.EOF {
				err = nil
			}
		}
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			return nil, err // the body's own failure (too long, see --max-body)
		}
		chunks = [][]byte{p[:min(n, r.ContentLength)]}
	}
	if n != r.ContentLength {
		return nil, fmt.Errorf("http: ContentLength=%d with Body length %d", r.ContentLength, n)
	}
	return chunks, nil
}

// hopHeaders are removed from a request and a reply on their way
// through, as the ReverseProxy does, with any header Connection names.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

func removeHopByHop(h http.Header) {
	for _, f := range h["Connection"] {
		for sf := range strings.SplitSeq(f, ",") {
			if sf = textproto.TrimString(sf); sf != "" {
				h.Del(sf)
			}
		}
	}
	for _, f := range hopHeaders {
		delete(h, f)
	}
}

// notForwarded are the request headers the passThrough does not copy: the hop
// by hop ones, those the ReverseProxy drops (forwarding headers a client
// could forge, and Origin, see Proxy), and those the Transport writes
// itself.
var notForwarded = map[string]bool{
	"Connection": true, "Proxy-Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
	"Forwarded": true, "X-Forwarded-For": true, "X-Forwarded-Host": true, "X-Forwarded-Proto": true,
	"Origin": true, "Host": true, "User-Agent": true, "Content-Length": true,
}

// appendHead appends the request's head as the Transport writes the
// ReverseProxy's request for it: request line, Host, User-Agent if the
// client sent one, Content-Length, then the other headers sorted. It
// reports false for a request URI the Transport refuses.
func appendHead(b []byte, r *http.Request, base *url.URL) ([]byte, bool) {
	u := url.URL{ForceQuery: r.URL.ForceQuery}
	u.Path, u.RawPath = joinURLPath(base, r.URL)
	if base.RawQuery == "" || r.URL.RawQuery == "" {
		u.RawQuery = base.RawQuery + r.URL.RawQuery
	} else {
		u.RawQuery = base.RawQuery + "&" + r.URL.RawQuery
	}
	method := r.Method
	if method == "" {
		method = "GET"
	}
	uri := u.RequestURI()
	if strings.ContainsFunc(uri, func(c rune) bool { return c < ' ' || c == 0x7f }) {
		return b, false
	}
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, base.Host...)
	b = append(b, "\r\n"...)

	var dropped []string // named by Connection
	for _, f := range r.Header["Connection"] {
		for sf := range strings.SplitSeq(f, ",") {
			if sf = textproto.TrimString(sf); sf != "" {
				dropped = append(dropped, textproto.CanonicalMIMEHeaderKey(sf))
			}
		}
	}
	if ua := r.Header["User-Agent"]; len(ua) > 0 && ua[0] != "" && !slices.Contains(dropped, "User-Agent") {
		b = appendHeader(b, "User-Agent", ua[0])
	}
	if r.ContentLength > 0 || method == "POST" || method == "PUT" || method == "PATCH" {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, r.ContentLength, 10)
		b = append(b, "\r\n"...)
	}
	var keyBuf [24]string
	keys := keyBuf[:0]
	for k := range r.Header {
		if !notForwarded[k] && !slices.Contains(dropped, k) {
			keys = append(keys, k)
		}
	}
	trailers := httpguts.HeaderValuesContainsToken(r.Header["Te"], "trailers") && !slices.Contains(dropped, "Te")
	if trailers {
		keys = append(keys, "Te")
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k == "Te" && trailers {
			b = appendHeader(b, k, "trailers")
			continue
		}
		for _, v := range r.Header[k] {
			b = appendHeader(b, k, v)
		}
	}
	return append(b, "\r\n"...), true
}

func appendHeader(b []byte, k, v string) []byte {
	b = append(b, k...)
	b = append(b, ": "...)
	b = append(b, textproto.TrimString(v)...)
	return append(b, "\r\n"...)
}

// joinURLPath is the ReverseProxy's join of the upstream's base path and
// the request's.
func joinURLPath(a, b *url.URL) (path, rawpath string) {
	if a.RawPath == "" && b.RawPath == "" {
		return singleJoiningSlash(a.Path, b.Path), ""
	}
	apath, bpath := a.EscapedPath(), b.EscapedPath()
	aslash, bslash := strings.HasSuffix(apath, "/"), strings.HasPrefix(bpath, "/")
	switch {
	case aslash && bslash:
		return a.Path + b.Path[1:], apath + bpath[1:]
	case !aslash && !bslash:
		return a.Path + "/" + b.Path, apath + "/" + bpath
	}
	return a.Path + b.Path, apath + bpath
}

func singleJoiningSlash(a, b string) string {
	aslash, bslash := strings.HasSuffix(a, "/"), strings.HasPrefix(b, "/")
	switch {
	case aslash && bslash:
		return a + b[1:]
	case !aslash && !bslash:
		return a + "/" + b
	}
	return a + b
}

// plainHost reports whether host is a host[:port] the Transport writes as
// it is: ASCII letters, digits and what separates them, no IPv6 zone.
func plainHost(host string) bool {
	if host == "" {
		return false
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(".-_:[]", c) >= 0) {
			return false
		}
	}
	return true
}

// copyReply copies the reply's body to w, flushing after every write if
// flush (a reply of unknown length streams).
func copyReply(w http.ResponseWriter, body io.Reader, flush bool) error {
	buf := buffers.Get()
	defer buffers.Put(buf)
	var rc *http.ResponseController
	if flush {
		rc = http.NewResponseController(w)
	}
	for {
		n, rerr := body.Read(buf)
		if n > 0 {
			m, werr := w.Write(buf[:n])
			if werr != nil {
				return werr
			}
			if m != n {
				return io.ErrShortWrite
			}
			if rc != nil {
				rc.Flush()
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// eofReader notes whether its reader reached its end. Closing it does
// nothing: a reply not read to its end is not read on (as the Transport,
// the pass-through closes its connection instead).
type eofReader struct {
	r   io.Reader
	eof bool
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.eof = true
	}
	return n, err
}

func (e *eofReader) Close() error { return nil }

// heads recycles the buffers request heads are written into.
var heads = headPool{}

type headPool struct{ p sync.Pool }

func (h *headPool) Get() []byte {
	if b, ok := h.p.Get().(*[]byte); ok {
		return *b
	}
	return make([]byte, 0, 1024)
}

func (h *headPool) Put(b []byte) {
	if cap(b) <= 64<<10 {
		h.p.Put(&b)
	}
}

// upstreamConn is a connection to a driver.
type upstreamConn struct {
	conn net.Conn
	raw  syscall.RawConn // for alive; nil if the connection has none
	br   *bufio.Reader
	addr string
	// nread counts the bytes read; limit, if not -1, is where reading
	// stops (a reply's head may be that long).
	nread, limit int64
	reused       bool
	// idleSince is when it last went idle; timer, when armed, closes it
	// if it is still idle passIdleTimeout after that. A connection in
	// steady use costs a timer firing every passIdleTimeout, not a
	// timer reset per request. All three are guarded by the pool's mu.
	idleSince time.Time
	armed     bool
	timer     *time.Timer
}

func (c *upstreamConn) Read(p []byte) (int, error) {
	if c.limit >= 0 {
		if c.nread >= c.limit {
			return 0, errHeadTooLarge
		}
		p = p[:min(int64(len(p)), c.limit-c.nread)]
	}
	n, err := c.conn.Read(p)
	c.nread += int64(n)
	return n, err
}

// alive reports whether an idle connection is still open and clean: the
// driver may have closed it while it idled (nothing reads an idle
// connection, so its end is seen only here), and it must not hold
// bytes nobody asked for. One non-blocking peek, no waiting.
func (c *upstreamConn) alive() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	if c.raw == nil {
		return true
	}
	ok := false
	var b [1]byte
	err := c.raw.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		ok = n < 0 && (err == syscall.EAGAIN || err == syscall.EWOULDBLOCK)
		return true
	})
	return err == nil && ok
}

// get returns an idle connection to addr, or a new one.
func (rl *passThrough) get(ctx context.Context, addr string) (*upstreamConn, error) {
	for {
		rl.mu.Lock()
		list := rl.idle[addr]
		if len(list) == 0 {
			rl.mu.Unlock()
			break
		}
		c := list[len(list)-1]
		list[len(list)-1] = nil
		rl.idle[addr] = list[:len(list)-1]
		if len(list) == 1 {
			delete(rl.idle, addr)
		}
		rl.nidle--
		rl.mu.Unlock()
		if c.alive() {
			c.reused = true
			return c, nil
		}
		c.conn.Close()
	}
	conn, err := rl.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &upstreamConn{conn: conn, addr: addr, limit: -1}
	if sc, ok := conn.(syscall.Conn); ok {
		c.raw, _ = sc.SyscallConn()
	}
	c.br = bufio.NewReaderSize(c, 4<<10)
	return c, nil
}

// put makes c idle, or closes it if the pool is full.
func (rl *passThrough) put(c *upstreamConn) {
	rl.mu.Lock()
	if len(rl.idle[c.addr]) >= passMaxIdlePerHost || rl.nidle >= passMaxIdle {
		rl.mu.Unlock()
		c.conn.Close()
		return
	}
	rl.idle[c.addr] = append(rl.idle[c.addr], c)
	rl.nidle++
	c.idleSince = time.Now()
	if !c.armed {
		c.armed = true
		if c.timer == nil {
			c.timer = time.AfterFunc(passIdleTimeout, func() { rl.expire(c) })
		} else {
			c.timer.Reset(passIdleTimeout)
		}
	}
	rl.mu.Unlock()
}

// expire closes c if it has been idle for passIdleTimeout; if it is idle
// for less, it looks again when that time is up; if it is in use, put
// arms the timer again.
func (rl *passThrough) expire(c *upstreamConn) {
	rl.mu.Lock()
	c.armed = false
	list := rl.idle[c.addr]
	i := slices.Index(list, c)
	if i < 0 {
		rl.mu.Unlock()
		return // in use
	}
	if idle := time.Since(c.idleSince); idle < passIdleTimeout {
		c.armed = true
		c.timer.Reset(passIdleTimeout - idle)
		rl.mu.Unlock()
		return
	}
	list = slices.Delete(list, i, i+1)
	if len(list) == 0 {
		delete(rl.idle, c.addr)
	} else {
		rl.idle[c.addr] = list
	}
	rl.nidle--
	rl.mu.Unlock()
	c.conn.Close()
}
