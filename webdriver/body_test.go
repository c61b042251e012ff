package webdriver_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

const mib = 1 << 20

// unsized hides a reader's length, so that net/http sends it chunked.
type unsized struct{ io.Reader }

// post sends body to url chunked (unknown length) or with its length.
func post(t testing.TB, url string, body []byte, chunked bool) (int, http.Header, []byte) {
	t.Helper()
	status, header, reply, err := tryPost(url, body, chunked)
	assert.NilError(t, err)
	return status, header, reply
}

// tryPost is post for goroutines other than the test's.
func tryPost(url string, body []byte, chunked bool) (int, http.Header, []byte, error) {
	var rd io.Reader = bytes.NewReader(body)
	if chunked {
		rd = unsized{rd}
	}
	req, err := http.NewRequest("POST", url, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, data, err
}

// A chunked body reaches the driver with a Content-Length: chromedriver
// refuses chunked requests.
func TestChunkedBodyForwardedWithLength(t *testing.T) {
	up := newFakeUpstream(t)
	type got struct {
		length int64
		te     []string
	}
	gotc := make(chan got, 1)
	up.setHandler(func(w http.ResponseWriter, r *http.Request) {
		gotc <- got{r.ContentLength, r.TransferEncoding}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"value":42}`)
	})
	srv := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: up.url}, Guard: webdriver.Guard{MaxBody: 1 << 20}, Log: quietLog()})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	body := []byte(`{"script":"return arguments[0] + 1","args":[41]}`)
	status, _, reply := post(t, hs.URL+"/session/s1/execute/sync", body, true)
	assert.Equal(t, status, 200, "%s", reply)
	g := <-gotc
	assert.Equal(t, g.length, int64(len(body)))
	assert.Equal(t, len(g.te), 0, "forwarded with Transfer-Encoding %v", g.te)
	assert.Equal(t, string(up.requests()[0].Body), string(body))
}

// Request bodies held in memory at once stay within Guard.BodyBudget: a
// body that finds no room is refused ("unknown error", retry later), and
// the room comes back when a handler ends.
func TestBodyBudget(t *testing.T) {
	hold := make(chan struct{})
	var release sync.Once
	defer release.Do(func() { close(hold) }) // a failing test must not hang in hs.Close
	held := make(chan int64, 8)
	g := webdriver.Guard{MaxBody: 4 * mib, BodyBudget: 8 * mib, BodyTimeout: 500 * time.Millisecond, Log: quietLog()}
	hs := httptest.NewServer(g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/whole" {
			body, err := webdriver.ReadBody(r)
			if err != nil {
				wire.WriteError(w, err)
				return
			}
			wire.WriteValue(w, len(body))
			return
		}
		// As the proxy does: the body streams from where the guard
		// holds it, while the handler runs.
		n, _ := io.Copy(io.Discard, r.Body)
		held <- n
		<-hold
		wire.WriteValue(w, n)
	})))
	defer hs.Close()
	type result struct {
		status int
		header http.Header
		body   []byte
		err    error
	}
	send := func(size int, chunked bool) <-chan result {
		c := make(chan result, 1)
		go func() { // owned by the test: it reads c
			s, h, b, err := tryPost(hs.URL, bytes.Repeat([]byte("x"), size), chunked)
			c <- result{s, h, b, err}
		}()
		return c
	}
	first, second := send(3*mib, false), send(3*mib, false)
	for range 2 {
		select {
		case <-held:
		case <-time.After(10 * time.Second):
			t.Fatal("the first two bodies never reached the handler")
		}
	}
	for _, chunked := range []bool{false, true} {
		third := send(3*mib, chunked)
		select {
		case r := <-third:
			assert.NilError(t, r.err)
			assert.Equal(t, r.status, 500, "%s", r.body)
			assertErrorShape(t, r.body, wire.UnknownError)
			assert.Assert(t, bytes.Contains(r.body, []byte("busy")), "%s", r.body)
			assert.Equal(t, r.header.Get("Retry-After"), "1")
		case n := <-held:
			t.Fatalf("a third body of %d bytes was held with two of 3 MiB: over the budget of 8 MiB", n)
		case <-time.After(20 * time.Second):
			t.Fatal("no reply")
		}
	}
	release.Do(func() { close(hold) })
	for _, c := range []<-chan result{first, second} {
		r := <-c
		assert.NilError(t, r.err)
		assert.Equal(t, r.status, 200, "%s", r.body)
	}
	// The room is back, and enough to take a chunked body of 3 MiB
	// whole (its chunks and their copy in one slice).
	status, _, reply := post(t, hs.URL+"/whole", bytes.Repeat([]byte("x"), 3*mib), true)
	assert.Equal(t, status, 200, "%s", reply)
	assert.Equal(t, string(reply), fmt.Sprintf(`{"value":%d}`, 3*mib))
}

// Announcing a large body holds no room for it until it arrives: clients
// that announce and send nothing cannot starve the others.
func TestBodyBudgetNotHeldByAnnouncing(t *testing.T) {
	g := webdriver.Guard{MaxBody: 4 * mib, BodyBudget: 8 * mib, BodyTimeout: 5 * time.Second, Log: quietLog()}
	hs := httptest.NewServer(g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := webdriver.ReadBody(r)
		if err != nil {
			wire.WriteError(w, err)
			return
		}
		wire.WriteValue(w, len(body))
	})))
	defer hs.Close()
	for range 4 {
		c, err := net.Dial("tcp", hs.Listener.Addr().String())
		assert.NilError(t, err)
		defer c.Close()
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n{", 4*mib)
	}
	time.Sleep(100 * time.Millisecond) // let them reach the guard (not a timing assertion: later is fine too)
	status, _, reply := post(t, hs.URL, []byte(`{"script":"return 1","args":[]}`), false)
	assert.Equal(t, status, 200, "%s", reply)
}

// A body of known length is read into a buffer of its size: no growth,
// no copy (up to a MiB; past it, in chunks of a MiB as it arrives).
func TestBodyReadExactly(t *testing.T) {
	const size = 1 * mib
	g := webdriver.Guard{MaxBody: 64 * mib, Log: quietLog()}
	hs := httptest.NewServer(g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := webdriver.ReadBody(r)
		if err != nil {
			wire.WriteError(w, err)
			return
		}
		wire.WriteValue(w, len(body))
	})))
	defer hs.Close()
	body := bytes.Repeat([]byte("x"), size)
	post(t, hs.URL, body[:1024], false) // warm up the connection
	// The least of a few tries: other goroutines allocate meanwhile.
	allocated := uint64(1 << 62)
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		status, _, reply := post(t, hs.URL, body, false)
		runtime.ReadMemStats(&after)
		assert.Equal(t, status, 200, "%s", reply)
		allocated = min(allocated, after.TotalAlloc-before.TotalAlloc)
	}
	t.Logf("a %d MiB body allocated %.2f MiB", size/mib, float64(allocated)/mib)
	assert.Assert(t, allocated < size*3/2, "a %d MiB body allocated %.2f MiB", size/mib, float64(allocated)/mib)
}

// rawReply sends req on a fresh connection, then reads the reply and
// checks that the server closes the connection after it. A server that
// never answers fails the test (after a generous wait, not a timing
// assertion: the guard's own timeout is far shorter).
func rawReply(t *testing.T, addr, req string, stall bool) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	assert.NilError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, req)
	assert.NilError(t, err)
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	assert.NilError(t, err, "no reply to a request whose body stalled")
	body, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	if stall {
		_, err = br.ReadByte()
		assert.Equal(t, err, io.EOF, "the connection stays open after a stalled body")
	}
	return resp, body
}

// A body that stops arriving after the headers is refused after
// Guard.BodyTimeout and its connection closed, whatever the route and
// however the guard was going to answer.
func TestStalledBody(t *testing.T) {
	up := newFakeUpstream(t)
	srv := webdriver.NewServer(webdriver.Config{
		Upstream: driver.Remote{URL: up.url},
		Guard:    webdriver.Guard{MaxBody: 1 << 20, BodyTimeout: 300 * time.Millisecond, Log: quietLog()},
		Log:      quietLog(),
	})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	addr := hs.Listener.Addr().String()
	for _, tc := range []struct {
		name, req string
		code      wire.ErrorCode
	}{{
		name: "announced length",
		req:  "POST /session/s1/execute/sync HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"scr",
		code: wire.InvalidArgument,
	}, {
		name: "chunked",
		req:  "POST /session/s1/execute/sync HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"scr\r\n",
		code: wire.InvalidArgument,
	}, {
		name: "new session",
		req:  "POST /session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
		code: wire.InvalidArgument,
	}, {
		name: "refused by the guard",
		req:  "POST /session/s1/url HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
		code: wire.UnknownError,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := rawReply(t, addr, tc.req, true)
			assert.Equal(t, resp.StatusCode, tc.code.Status(), "%s", body)
			assert.Equal(t, resp.Header.Get("Content-Type"), wire.ContentType)
			assertErrorShape(t, body, tc.code)
		})
	}
	assert.Equal(t, len(up.requests()), 0, "a stalled request went upstream")
}

// The body timeout is about the body only: a body that arrives slowly
// but steadily is read, and a command may run far longer than the
// timeout once its body is in.
func TestBodyTimeoutSparesSlowCommands(t *testing.T) {
	up := newFakeUpstream(t)
	up.setHandler(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(1500 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"value":"late"}`)
	})
	srv := webdriver.NewServer(webdriver.Config{
		Upstream: driver.Remote{URL: up.url},
		// 62 bytes/s, steady: above a minimum rate of 20, and pauses of
		// 80 ms, well within the timeout (a loaded machine once
		// stretched one past 200 ms).
		Guard: webdriver.Guard{MaxBody: 1 << 20, BodyTimeout: 500 * time.Millisecond, BodyMinRate: 20, Log: quietLog()},
		Log:   quietLog(),
	})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	body := `{"script":"arguments[0]('late')","args":[]}`
	for _, trickle := range []bool{false, true} {
		t.Run(fmt.Sprint("trickle=", trickle), func(t *testing.T) {
			pr, pw := io.Pipe()
			go func() { // owned by the test: ends when the body is written
				for i := 0; i < len(body); i += 5 {
					if trickle {
						time.Sleep(80 * time.Millisecond)
					}
					pw.Write([]byte(body[i:min(i+5, len(body))]))
				}
				pw.Close()
			}()
			req, _ := http.NewRequest("POST", hs.URL+"/session/s1/execute/async", pr)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			assert.NilError(t, err)
			defer resp.Body.Close()
			reply, _ := io.ReadAll(resp.Body)
			assert.Equal(t, resp.StatusCode, 200, "%s", reply)
			assert.Equal(t, string(reply), `{"value":"late"}`)
		})
	}
	reqs := up.requests()
	assert.Equal(t, len(reqs), 2)
	assert.Equal(t, string(reqs[1].Body), body)
}

// A body that never stalls for BodyTimeout but trickles, a byte now and
// then under an announced megabyte, is refused once it falls behind
// BodyMinRate: it would hold a megabyte of the body budget for as long as
// it likes, and two such clients starved every other POST (issue 28).
func TestTricklingBodyRefused(t *testing.T) {
	up := newFakeUpstream(t)
	srv := webdriver.NewServer(webdriver.Config{
		Upstream: driver.Remote{URL: up.url},
		Guard:    webdriver.Guard{MaxBody: 1 << 20, BodyTimeout: 300 * time.Millisecond, BodyMinRate: 1000, Log: quietLog()},
		Log:      quietLog(),
	})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	c, err := net.Dial("tcp", hs.Listener.Addr().String())
	assert.NilError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "POST /session/s1/execute/sync HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n{")
	assert.NilError(t, err)
	done := make(chan struct{})
	defer close(done)
	go func() { // owned by the test: ends when it returns or the connection fails
		for {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if _, err := io.WriteString(c, " "); err != nil {
				return
			}
		}
	}()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	assert.NilError(t, err, "a trickling body was never refused")
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, resp.StatusCode, wire.InvalidArgument.Status(), "%s", body)
	assertErrorShape(t, body, wire.InvalidArgument)
	assert.Assert(t, strings.Contains(string(body), "request body too slow"), "%s", body)
	assert.Equal(t, len(up.requests()), 0)
}

// The guard tells why it refused a request, at debug level.
func TestGuardLogsRefusals(t *testing.T) {
	for _, tc := range []struct {
		name     string
		req      func() *http.Request
		mentions string
	}{
		{"host", func() *http.Request {
			r := httptest.NewRequest("GET", "/session/x/title", nil)
			r.Host = "evil.example"
			return r
		}, "evil.example"},
		{"origin", func() *http.Request {
			r := httptest.NewRequest("GET", "/session/x/title", nil)
			r.Header.Set("Origin", "http://evil.example")
			return r
		}, "http://evil.example"},
		{"content type", func() *http.Request {
			r := httptest.NewRequest("POST", "/session/x/url", strings.NewReader(`{}`))
			r.Header.Set("Content-Type", "text/plain")
			r.Header.Set("Sec-Fetch-Site", "cross-site")
			return r
		}, "text/plain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			g := webdriver.Guard{Log: debugLog(&buf)}
			h := g.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("not refused") }))
			serve(h, tc.req())
			line := buf.String()
			assert.Assert(t, strings.Contains(line, "refused") && strings.Contains(line, tc.mentions), "%q", line)
			assert.Equal(t, strings.Count(line, "\n"), 1, "%q", line)
		})
	}
}

func debugLog(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
