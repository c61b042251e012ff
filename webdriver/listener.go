package webdriver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/wdext/wdext/wire"
)

// ErrorListener wraps l so that the replies net/http writes on its own,
// before any handler runs (a malformed request line or header, headers
// over http.Server.MaxHeaderBytes, an unknown transfer encoding), are W3C
// errors like every other reply of wdext rather than plain text. Serve
// on it: http.Server.Serve(ErrorListener(l)).
func ErrorListener(l net.Listener) net.Listener { return errorListener{l} }

type errorListener struct{ net.Listener }

func (l errorListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return errorConn{c}, nil
}

// errorConn rewrites net/http's own error replies on their way out.
// There is no hook for them: net/http writes each straight to the
// connection, whole, in one Write of "HTTP/1.1 <status>", the headers
// plainErrorHeaders and a line of text. No other reply looks like that:
// net/http gives a handler's reply a Date header, which would come
// between Connection and the blank line, and wdext's handlers reply
// JSON anyway.
type errorConn struct{ net.Conn }

func (c errorConn) Write(p []byte) (int, error) {
	if reply, ok := w3cReply(p); ok {
		if _, err := c.Conn.Write(reply); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// CloseWrite lets net/http half-close the connection after an error
// reply, as it does on a *net.TCPConn, so that the client reads the
// reply before the connection resets.
func (c errorConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// plainErrorHeaders are the headers of net/http's own error replies.
const plainErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// maxPlainError bounds the replies w3cReply looks into: net/http's are a
// line of text.
const maxPlainError = 4 << 10

// w3cReply returns p, if it is one of net/http's own error replies, as a
// W3C error with the same status. 400 is "invalid argument", the W3C
// error of that status; any other (431 headers too large, 501 unknown
// transfer encoding) has no W3C error of its own, so it keeps its status,
// which says what went wrong, with "unknown error".
func w3cReply(p []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(p, []byte("HTTP/1.1 "))
	if !ok || len(p) > maxPlainError {
		return nil, false
	}
	statusLine, text, ok := bytes.Cut(rest, []byte(plainErrorHeaders))
	if !ok || len(statusLine) < 3 || bytes.ContainsAny(text, "\r\n") {
		return nil, false
	}
	status, err := strconv.Atoi(string(statusLine[:3]))
	if err != nil || status < 400 || status > 599 {
		return nil, false
	}
	code := wire.UnknownError
	if status == http.StatusBadRequest {
		code = wire.InvalidArgument
	}
	body, _ := json.Marshal(wire.ErrorEnvelope{Value: wire.ErrorValue{Error: string(code), Message: string(text)}})
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nCache-Control: no-cache\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		status, http.StatusText(status), wire.ContentType, len(body), body), true
}
