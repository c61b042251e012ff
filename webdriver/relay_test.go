package webdriver_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"testing"
)

// TestMain runs the test binary as one of BenchmarkExecuteSyncServe's
// relays when the benchmark starts it so (the relay's variable set to the
// upstream host:port), and as the tests otherwise.
func TestMain(m *testing.M) {
	if up := os.Getenv(httpRelayEnv); up != "" {
		serveRelay(up, relayConn)
	}
	if up := os.Getenv(tcpRelayEnv); up != "" {
		serveRelay(up, copyConn)
	}
	os.Exit(m.Run())
}

const (
	httpRelayEnv = "WDEXT_BENCH_HTTP_RELAY"
	tcpRelayEnv  = "WDEXT_BENCH_TCP_RELAY"
)

// serveRelay prints its address on stdout and hands each client
// connection to relay, with up, on a goroutine of its own, until killed.
func serveRelay(up string, relay func(c net.Conn, up string)) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("http://" + l.Addr().String())
	for {
		c, err := l.Accept()
		if err != nil {
			os.Exit(1)
		}
		go relay(c, up)
	}
}

// copyConn is the cheapest hop there is, the benchmark's tcp-relay: it
// copies bytes both ways between c and its own connection to up (splice
// on Linux), knowing nothing of HTTP.
func copyConn(c net.Conn, up string) {
	defer c.Close()
	u, err := net.Dial("tcp", up)
	if err != nil {
		return
	}
	defer u.Close()
	go func() { // ends when either connection closes, as this one does
		io.Copy(u, c)
		u.Close()
	}()
	io.Copy(c, u)
}

// relayConn is the least an HTTP-aware intermediary can do, the
// benchmark's http-relay: one goroutine per client connection, which
// reads a request (head lines, then Content-Length bytes), writes it to
// its own connection to up, reads the reply the same way and writes it
// back. Nothing is checked or rewritten; chromedriver's requests and
// replies always carry Content-Length.
func relayConn(c net.Conn, up string) {
	defer c.Close()
	in := bufio.NewReader(c)
	var u net.Conn
	var uin *bufio.Reader
	for {
		req, err := readMessage(in)
		if err != nil {
			return
		}
		if u == nil {
			if u, err = net.Dial("tcp", up); err != nil {
				return
			}
			defer u.Close()
			uin = bufio.NewReader(u)
		}
		if _, err := u.Write(req); err != nil {
			return
		}
		reply, err := readMessage(uin)
		if err != nil {
			return
		}
		if _, err := c.Write(reply); err != nil {
			return
		}
	}
}

// readMessage reads one HTTP/1.1 message framed by Content-Length.
func readMessage(r *bufio.Reader) ([]byte, error) {
	var msg []byte
	n := 0
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		msg = append(msg, line...)
		if len(bytes.TrimSpace(line)) == 0 {
			break
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
			if n, err = strconv.Atoi(string(bytes.TrimSpace(v))); err != nil {
				return nil, err
			}
		}
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return append(msg, body...), nil
}
