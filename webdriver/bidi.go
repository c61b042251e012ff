package webdriver

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gorilla/websocket"
)

// bidiUpgrader accepts the client side. Origin is checked by the Guard
// before we get here, so the upgrader's own check is redundant.
var bidiUpgrader = websocket.Upgrader{
	ReadBufferSize:  64 << 10,
	WriteBufferSize: 64 << 10,
	CheckOrigin:     func(*http.Request) bool { return true },
}

// bidi proxies a BiDi websocket to the upstream's webSocketUrl, frame for
// frame both ways, and carries close codes across.
func (s *Server) bidi(w http.ResponseWriter, r *http.Request) {
	sess, end, err := s.liveSession(r)
	if err != nil {
		WriteError(w, err)
		return
	}
	// An open BiDi connection is a session in use: its commands may be
	// under way, unseen by wdext, for as long as they take.
	defer end()
	if sess.BiDiURL == "" {
		WriteError(w, Errorf(UnknownCommand, "session %q has no BiDi connection (ask for webSocketUrl: true)", sess.ID))
		return
	}
	target, err := url.Parse(sess.BiDiURL)
	if err != nil {
		WriteError(w, Errorf(UnknownError, "bad upstream webSocketUrl %q: %v", sess.BiDiURL, err))
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
		WriteError(w, Errorf(UnknownError, "connecting to upstream BiDi %s: %v", target.Redacted(), err))
		return
	}
	defer up.Close()
	down, err := bidiUpgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered the client
	}
	defer down.Close()
	s.cfg.Log.Debug("bidi connected", "session", sess.ID, "upstream", target.Redacted())

	errc := make(chan error, 2)
	go pump(down, up, sess.Touch, errc) // owned here: we wait for both below
	go pump(up, down, func() {}, errc)
	<-errc
	// One side ended: closing both ends the other pump.
	up.Close()
	down.Close()
	<-errc
}

// pump copies messages from src to dst unchanged. When src closes with a
// close frame, the same code and text go to dst.
func pump(dst, src *websocket.Conn, touch func(), errc chan<- error) {
	for {
		kind, data, err := src.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				switch ce.Code {
				case websocket.CloseAbnormalClosure, websocket.CloseTLSHandshake:
					// No close frame came: src just dropped. These codes
					// must never be sent, so drop dst the same way.
				default:
					// 1005 (a close frame without a code) formats as an
					// empty close frame: the same again.
					msg := websocket.FormatCloseMessage(ce.Code, ce.Text)
					dst.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
				}
			}
			errc <- err
			return
		}
		touch()
		if err := dst.WriteMessage(kind, data); err != nil {
			errc <- err
			return
		}
	}
}
