package webdriver_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

// rawUpstream is a driver at the byte level: it keeps every request as
// it came on the wire, counts connections, and answers each request with
// reply(request number), as is (closing the connection after a reply
// that says Connection: close).
type rawUpstream struct {
	t     testing.TB
	url   *url.URL
	mu    sync.Mutex
	reqs  [][]byte
	conns int
	reply func(n int) string
	// closeAfter, if set (under mu), closes each connection after its
	// first reply, without saying so (as a driver that drops idle
	// connections).
	closeAfter bool
	// dropSecond, if set (under mu), makes the first connection close
	// without a reply when its second request has come.
	dropSecond bool
	wg         sync.WaitGroup
}

func newRawUpstream(t testing.TB, reply func(n int) string) *rawUpstream {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	u := &rawUpstream{t: t, url: &url.URL{Scheme: "http", Host: l.Addr().String()}, reply: reply}
	var conns []net.Conn
	u.wg.Add(1)
	go func() { // owned by the cleanup below
		defer u.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u.mu.Lock()
			u.conns++
			conns = append(conns, c)
			u.mu.Unlock()
			u.wg.Add(1)
			go func() { // owned by the cleanup below
				defer u.wg.Done()
				defer c.Close()
				u.serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		u.mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		u.mu.Unlock()
		u.wg.Wait()
	})
	return u
}

func (u *rawUpstream) serve(c net.Conn) {
	br := bufio.NewReader(c)
	u.mu.Lock()
	first := u.conns == 1
	u.mu.Unlock()
	for served := 0; ; served++ {
		var head bytes.Buffer
		length := 0
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			head.WriteString(line)
			if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Length") {
				length, _ = strconv.Atoi(strings.TrimSpace(v))
			}
			if line == "\r\n" {
				break
			}
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(br, body); err != nil {
			return
		}
		u.mu.Lock()
		u.reqs = append(u.reqs, append(head.Bytes(), body...))
		n, closeAfter, drop := len(u.reqs), u.closeAfter, u.dropSecond && first && served == 1
		u.mu.Unlock()
		if drop {
			return
		}
		reply := u.reply(n)
		if _, err := io.WriteString(c, reply); err != nil || closeAfter || strings.Contains(reply, "Connection: close") {
			return
		}
	}
}

func (u *rawUpstream) requests() [][]byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([][]byte(nil), u.reqs...)
}

func (u *rawUpstream) connections() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.conns
}

const jsonOK = "HTTP/1.1 200 OK\r\nContent-Length: 11\r\nContent-Type: application/json; charset=utf-8\r\ncache-control: no-cache\r\n\r\n{\"value\":1}"

// The driver gets the client's request less what is the hop's own
// (hop-by-hop headers, those Connection names, forwarding headers a client
// could forge, Origin), with Host its own and the base's path and query
// joined to the request's; the client gets the driver's reply, made JSON.
func TestForwardOnTheWire(t *testing.T) {
	type request struct {
		method, target, body string
		header               http.Header
	}
	requests := []request{
		{"GET", "/session/s1/title", "", http.Header{"User-Agent": {"selenium/4.8 (python linux)"}, "Accept": {"application/json"}}},
		{"POST", "/session/s1/execute/sync", `{"script":"return 1","args":[]}`, http.Header{
			"Content-Type": {"application/json; charset=utf-8"}, "Origin": {"http://evil.example"},
			"X-Forwarded-For": {"1.2.3.4"}, "Forwarded": {"for=1.2.3.4"}, "X-Forwarded-Host": {"h"}, "X-Forwarded-Proto": {"http"},
			"Connection": {"keep-alive, X-Hop"}, "X-Hop": {"gone"}, "Keep-Alive": {"timeout=5"}, "Te": {"gzip, trailers"},
			"Accept-Encoding": {"identity"}, "X-Two": {"a", " b "}, "Proxy-Authorization": {"Basic x"},
		}},
		{"GET", "/session/s1/element/a%2Fb/text?x=1", "", nil},
	}
	replies := []string{
		jsonOK,
		"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\nno such x",
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n5\r\n{\"val\r\n6\r\nue\":1}\r\n0\r\nX-T: done\r\n\r\n",
	}
	for _, base := range []string{"", "/wd/hub?a=1"} {
		for i, rq := range requests {
			up := newRawUpstream(t, func(int) string { return replies[i] })
			u := *up.url
			if base != "" {
				u.Path, u.RawQuery, _ = strings.Cut(base, "?")
			}
			req := httptest.NewRequest(rq.method, rq.target, strings.NewReader(rq.body))
			for k, v := range rq.header {
				req.Header[k] = v
			}
			rec := httptest.NewRecorder()
			webdriver.NewProxy(nil, quietLog()).Forward(rec, req, &u, nil)
			reqs := up.requests()
			assert.Equal(t, len(reqs), 1)
			got, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(reqs[0])))
			assert.NilError(t, err)
			wantURI := rq.target
			if base != "" {
				path, query, _ := strings.Cut(rq.target, "?")
				wantURI = "/wd/hub" + path + "?" + strings.TrimSuffix("a=1&"+query, "&")
			}
			assert.Equal(t, got.RequestURI, wantURI)
			assert.Equal(t, got.Host, up.url.Host)
			for _, h := range []string{"Origin", "X-Forwarded-For", "Forwarded", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Hop", "Keep-Alive", "Proxy-Authorization"} {
				assert.Equal(t, got.Header.Get(h), "", "%s went upstream", h)
			}
			assert.Equal(t, got.Header.Get("User-Agent"), rq.header.Get("User-Agent"))
			if rq.header.Get("X-Two") != "" {
				assert.DeepEqual(t, got.Header["X-Two"], []string{"a", "b"})
				assert.Equal(t, got.Header.Get("Te"), "trailers")
				assert.Equal(t, got.Header.Get("Accept-Encoding"), "identity")
			}
			body, _ := io.ReadAll(got.Body)
			assert.Equal(t, string(body), rq.body)
			assert.Equal(t, rec.Header().Get("Content-Type"), wire.ContentType)
			switch i {
			case 1:
				assert.Equal(t, rec.Code, 500)
				assertErrorShape(t, rec.Body.Bytes(), wire.UnknownError)
			default:
				assert.Equal(t, rec.Code, 200)
				assert.Equal(t, rec.Body.String(), `{"value":1}`)
			}
		}
	}
}

// The proxy keeps its connections to a driver: one for commands in turn,
// and a connection the driver dropped while it idled is never used (the
// command goes on a new one, whatever its method).
func TestForwardPool(t *testing.T) {
	up := newRawUpstream(t, func(int) string { return jsonOK })
	p := webdriver.NewProxy(nil, quietLog())
	forward := func() {
		t.Helper()
		rec := httptest.NewRecorder()
		p.Forward(rec, httptest.NewRequest("POST", "/session/s1/element/e/click", strings.NewReader(`{}`)), up.url, nil)
		assert.Equal(t, rec.Code, 200, "%s", rec.Body)
		assert.Equal(t, rec.Body.String(), `{"value":1}`)
	}
	for range 5 {
		forward()
	}
	assert.Equal(t, up.connections(), 1)

	up = newRawUpstream(t, func(int) string { return jsonOK })
	up.mu.Lock()
	up.closeAfter = true
	up.mu.Unlock()
	for i := range 5 {
		forward()
		time.Sleep(20 * time.Millisecond) // the driver's close arrives
		assert.Equal(t, up.connections(), i+1)
	}
}

// A client that leaves while the driver works abandons the request: the
// connection to the driver closes (a reply to nobody is not waited for)
// and the handler returns at once.
func TestForwardClientGone(t *testing.T) {
	arrived := make(chan struct{})
	release := make(chan struct{})
	up := newFakeUpstream(t)
	up.setHandler(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		select {
		case <-r.Context().Done(): // wdext hung up
		case <-release:
		}
	})
	defer close(release)
	p := webdriver.NewProxy(nil, quietLog())
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequest("POST", "/session/s1/execute/async", strings.NewReader(`{"script":"","args":[]}`)).WithContext(ctx)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { // owned by the test, which waits for done
		defer close(done)
		p.Forward(rec, req, up.url, nil)
	}()
	<-arrived
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Forward did not return when its client left")
	}
	assert.Equal(t, rec.Code, 499)
}

// A command whose connection the driver drops once it has the request,
// without a reply, is sent again on a new connection when that is safe
// (an idempotent method, no body), and is an error when it is not.
func TestForwardRetry(t *testing.T) {
	for _, method := range []string{"GET", "POST"} {
		up := newRawUpstream(t, func(int) string { return jsonOK })
		up.mu.Lock()
		up.dropSecond = true
		up.mu.Unlock()
		p := webdriver.NewProxy(nil, quietLog())
		for i := range 2 {
			body := ""
			if method == "POST" {
				body = `{}`
			}
			rec := httptest.NewRecorder()
			p.Forward(rec, httptest.NewRequest(method, "/session/s1/url", strings.NewReader(body)), up.url, nil)
			if i == 0 {
				assert.Equal(t, rec.Code, 200, "%s", rec.Body)
				continue
			}
			want := map[string]int{"GET": 200, "POST": 500}[method]
			assert.Equal(t, rec.Code, want, "%s: %s", method, rec.Body)
			if rec.Code != 200 {
				assertErrorShape(t, rec.Body.Bytes(), wire.UnknownError)
			}
		}
	}
}
