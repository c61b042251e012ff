package webdriver

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/gorilla/websocket"
	"github.com/wdext/wdext/wire"
)

// bidiUpgrader accepts the client side. Origin is checked by the Guard
// before we get here, so the upgrader's own check is redundant. A broken
// handshake is refused with a W3C error, as any bad request is.
var bidiUpgrader = websocket.Upgrader{
	ReadBufferSize:  64 << 10,
	WriteBufferSize: 64 << 10,
	CheckOrigin:     func(*http.Request) bool { return true },
	Error: func(w http.ResponseWriter, _ *http.Request, status int, reason error) {
		code := wire.UnknownError
		if status == http.StatusBadRequest {
			code = wire.InvalidArgument
		}
		wire.WriteError(w, wire.Errorf(code, "%v", reason))
	},
}

// bidi proxies a BiDi websocket to the upstream's webSocketUrl, frame for
// frame both ways, and carries close codes across.
func (s *Server) bidi(w http.ResponseWriter, r *http.Request) {
	sess, end, err := s.liveSession(r)
	if err != nil {
		wire.WriteError(w, err)
		return
	}
	// An open BiDi connection is a session in use: its commands may be
	// under way, unseen by wdext, for as long as they take.
	defer end()
	if sess.BiDiURL == "" {
		wire.WriteError(w, wire.Errorf(wire.UnknownCommand, "session %q has no BiDi connection (ask for webSocketUrl: true)", sess.ID))
		return
	}
	target, err := url.Parse(sess.BiDiURL)
	if err != nil {
		wire.WriteError(w, wire.Errorf(wire.UnknownError, "bad upstream webSocketUrl %q: %v", sess.BiDiURL, err))
		return
	}
	dialCtx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	// No Origin upstream, and the Host the driver expects: the dialer
	// derives Host from the URL.
	up, resp, err := websocket.DefaultDialer.DialContext(dialCtx, target.String(), nil)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		wire.WriteError(w, wire.Errorf(wire.UnknownError, "connecting to upstream BiDi %s: %v", target.Redacted(), err))
		return
	}
	defer up.Close()
	down, err := bidiUpgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered the client
	}
	defer down.Close()
	// No message larger than a request body: past it, the connection
	// closes with 1009 "message too big" (gorilla sends it to the side
	// that sent the message, pump to the other).
	down.SetReadLimit(s.cfg.Guard.MaxBody)
	up.SetReadLimit(s.cfg.Guard.MaxBody)
	s.cfg.Log.Debug("bidi connected", "session", sess.ID, "upstream", target.Redacted())

	ends := make(chan pumpEnd, 2)
	go pump(down, up, sess.Touch, ends) // owned here: we wait for both below
	go pump(up, down, func() {}, ends)
	first := <-ends
	pending := 1 // the other pump
	if closing(first.err) {
		// The other side was sent a close frame: give it a moment to
		// answer, as the closing handshake has it, before hanging up.
		grace := time.NewTimer(closeGrace)
		defer grace.Stop()
		if errors.Is(first.err, websocket.ErrReadLimit) {
			// The sender of the message too big is likely sending the
			// rest of it: hanging up on unread data resets the
			// connection, and the 1009 it was sent would be lost.
			drain(first.src.UnderlyingConn(), time.Now().Add(closeGrace))
		}
		select {
		case <-ends:
			pending = 0
		case <-grace.C: // no answer, or the pump is stuck writing
		}
	}
	// Closing both ends the other pump, if it still runs.
	up.Close()
	down.Close()
	if pending > 0 {
		<-ends
	}
}

// closeGrace bounds the closing handshake of a BiDi connection.
const closeGrace = time.Second

// drain half-closes c and discards what it still receives until the peer
// hangs up or the deadline.
func drain(c net.Conn, deadline time.Time) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	c.SetReadDeadline(deadline)
	io.Copy(io.Discard, c)
}

// pumpEnd is how a pump ended: reading src, or writing what it read.
type pumpEnd struct {
	src *websocket.Conn
	err error
}

// pump copies messages from src to dst unchanged, frame by frame as they
// come: it never holds a message whole, however large. When src closes
// with a close frame, the same code and text go to dst; when a message
// from src is over the read limit, dst gets 1009 too.
func pump(dst, src *websocket.Conn, touch func(), ends chan<- pumpEnd) {
	for {
		kind, rd, err := src.NextReader()
		if err == nil {
			touch()
			err = relay(dst, kind, rd)
		}
		if err != nil {
			if closing(err) {
				passClose(dst, err)
			}
			ends <- pumpEnd{src, err}
			return
		}
	}
}

// relay copies one message. One cut short stays unfinished on dst: what
// follows it is the close.
func relay(dst *websocket.Conn, kind int, rd io.Reader) error {
	wr, err := dst.NextWriter(kind)
	if err != nil {
		return err
	}
	// The writer reads rd into its own buffer, a frame at a time.
	if _, err := io.Copy(wr, rd); err != nil {
		return err
	}
	return wr.Close()
}

// closing reports whether a pump's end calls for a close frame to dst:
// src sent one, with a code that may be sent on, or sent a message too
// big. Otherwise src dropped (or dst failed), and so does the other.
func closing(err error) bool {
	if errors.Is(err, websocket.ErrReadLimit) {
		return true
	}
	var ce *websocket.CloseError
	// 1006 and 1015 mean that no close frame came; they must never be
	// sent.
	return errors.As(err, &ce) && ce.Code != websocket.CloseAbnormalClosure && ce.Code != websocket.CloseTLSHandshake
}

// passClose tells dst how src ended (see closing).
func passClose(dst *websocket.Conn, err error) {
	msg := websocket.FormatCloseMessage(websocket.CloseMessageTooBig, "message over the limit of wdext --max-body")
	if ce := (*websocket.CloseError)(nil); errors.As(err, &ce) {
		// 1005 (a close frame without a code) formats as an empty close
		// frame: the same again.
		msg = websocket.FormatCloseMessage(ce.Code, ce.Text)
	}
	dst.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
}
