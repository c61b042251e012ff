package webdriver_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

// The replies net/http writes itself, before any handler runs, are W3C
// errors too: the request line or headers are broken, or too large.
func TestErrorListener(t *testing.T) {
	up := newFakeUpstream(t)
	srv := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: up.url}, Log: quietLog()})
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener = webdriver.ErrorListener(hs.Listener)
	hs.Config.MaxHeaderBytes = 1 << 10
	hs.Start()
	defer hs.Close()
	addr := hs.Listener.Addr().String()

	for _, tc := range []struct {
		name, req string
		status    int
		code      wire.ErrorCode
		mentions  string
	}{
		{"malformed request line", "GARBAGE\r\n\r\n", 400, wire.InvalidArgument, "Bad Request"},
		{"no host", "GET /status HTTP/1.1\r\n\r\n", 400, wire.InvalidArgument, "Host"},
		{"bad header", "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: x\r\n\r\n", 400, wire.InvalidArgument, "header"},
		{"headers too large", "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + strings.Repeat("x", 8<<10) + "\r\n\r\n", 431, wire.UnknownError, "Too Large"},
		{"unknown transfer encoding", "POST /session HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: rot13\r\n\r\n", 501, wire.UnknownError, "transfer encoding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := rawReply(t, addr, tc.req, false)
			assert.Equal(t, resp.StatusCode, tc.status, "%s", body)
			assert.Equal(t, resp.Header.Get("Content-Type"), wire.ContentType)
			assert.Equal(t, resp.Header.Get("Content-Length"), strconv.Itoa(len(body)))
			assert.Assert(t, resp.Close, "the connection should close")
			assertErrorShape(t, body, tc.code)
			assert.Assert(t, strings.Contains(string(body), tc.mentions), "%s", body)
		})
	}

	// Everything else passes through untouched, several replies on one
	// connection included.
	c, err := net.Dial("tcp", addr)
	assert.NilError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	for range 3 {
		io.WriteString(c, "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		assert.NilError(t, err)
		body, _ := io.ReadAll(resp.Body)
		assert.Equal(t, resp.StatusCode, 200, "%s", body)
		assert.Assert(t, strings.HasPrefix(string(body), `{"value":{`), "%s", body)
	}
}
