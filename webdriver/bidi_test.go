package webdriver_test

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/webdriver"
)

// fakeBiDi is an upstream driver whose new-session reply announces a BiDi
// websocket. The websocket echoes every frame; the text "close CODE TEXT"
// makes it close with that code, "drop" makes it drop the connection
// without a close frame. Close frames it receives go to closes.
type fakeBiDi struct {
	srv    *httptest.Server
	closes chan *websocket.CloseError
}

func newFakeBiDi(t *testing.T) *fakeBiDi {
	f := &fakeBiDi{closes: make(chan *websocket.CloseError, 4)}
	up := websocket.Upgrader{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /session", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		ws := "ws://" + r.Host + "/session/s1"
		io.WriteString(w, `{"value":{"sessionId":"s1","capabilities":{"browserName":"chrome","webSocketUrl":"`+ws+`"}}}`)
	})
	mux.HandleFunc("GET /session/s1", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" {
			http.Error(w, "origin sent upstream", http.StatusForbidden)
			return
		}
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			kind, data, err := c.ReadMessage()
			if err != nil {
				var ce *websocket.CloseError
				if errors.As(err, &ce) {
					f.closes <- ce
				}
				return
			}
			if kind == websocket.TextMessage {
				var code int
				var text string
				if n, _ := parseClose(string(data), &code, &text); n >= 1 {
					c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(time.Second))
					// Wait for the close reply, as a real server does.
					c.SetReadDeadline(time.Now().Add(5 * time.Second))
					for {
						if _, _, err := c.ReadMessage(); err != nil {
							return
						}
					}
				}
				if string(data) == "drop" {
					c.UnderlyingConn().Close()
					return
				}
			}
			if err := c.WriteMessage(kind, data); err != nil {
				return
			}
		}
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// parseClose parses "close CODE [TEXT]".
func parseClose(s string, code *int, text *string) (int, error) {
	rest, ok := strings.CutPrefix(s, "close ")
	if !ok {
		return 0, nil
	}
	num, txt, _ := strings.Cut(rest, " ")
	n := 0
	for _, r := range num {
		if r < '0' || r > '9' {
			return 0, nil
		}
		n = n*10 + int(r-'0')
	}
	*code, *text = n, txt
	return 2, nil
}

// wdextBiDi starts wdext in front of a fake BiDi upstream, creates the
// session and connects to the webSocketUrl wdext returned, with an Origin
// that wdext allows (and must not pass on: the fake refuses it).
func wdextBiDi(t *testing.T) (*fakeBiDi, *websocket.Conn) {
	f := newFakeBiDi(t)
	u, _ := url.Parse(f.srv.URL)
	const origin = "http://allowed.test"
	srv := webdriver.NewServer(webdriver.Config{
		Upstream: driver.Remote{URL: u},
		Guard:    webdriver.Guard{AllowedOrigins: []string{origin}},
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	c := newWire(t, hs.URL, true)
	_, caps := c.newSession(newSessionBody(map[string]any{"webSocketUrl": true}))
	wsURL := caps["webSocketUrl"].(string)
	assert.Equal(t, wsURL, "ws://"+strings.TrimPrefix(hs.URL, "http://")+"/session/s1")
	ws, resp, err := websocket.DefaultDialer.Dial(wsURL, http.Header{"Origin": {origin}})
	assert.NilError(t, err)
	resp.Body.Close()
	t.Cleanup(func() { ws.Close() })
	return f, ws
}

// Frames go through unchanged both ways.
func TestBiDiFramesUnchanged(t *testing.T) {
	_, ws := wdextBiDi(t)
	msgs := []struct {
		kind int
		data []byte
	}{
		{websocket.TextMessage, []byte(`{"id":1,"method":"session.status","params":{}}`)},
		{websocket.TextMessage, []byte(`  {"odd"  :  "spacing",  "ü": "\u00fc"}  `)},
		{websocket.BinaryMessage, []byte{0, 1, 2, 0xff, 0xfe}},
		{websocket.TextMessage, bytes.Repeat([]byte("x"), 1<<20)},
	}
	for _, m := range msgs {
		assert.NilError(t, ws.WriteMessage(m.kind, m.data))
		ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		kind, data, err := ws.ReadMessage()
		assert.NilError(t, err)
		assert.Equal(t, kind, m.kind)
		assert.Assert(t, bytes.Equal(data, m.data), "frame changed: %.80q → %.80q", m.data, data)
	}
}

// A close code from the client reaches the driver.
func TestBiDiClientCloseCode(t *testing.T) {
	f, ws := wdextBiDi(t)
	assert.NilError(t, ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4001, "client bye"), time.Now().Add(time.Second)))
	select {
	case ce := <-f.closes:
		assert.Equal(t, ce.Code, 4001)
		assert.Equal(t, ce.Text, "client bye")
	case <-time.After(10 * time.Second):
		t.Fatal("the driver got no close frame")
	}
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _, err := ws.ReadMessage()
	var ce *websocket.CloseError
	assert.Assert(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, ce.Code, 4001)
}

// A close code from the driver reaches the client.
func TestBiDiDriverCloseCode(t *testing.T) {
	_, ws := wdextBiDi(t)
	assert.NilError(t, ws.WriteMessage(websocket.TextMessage, []byte("close 4002 driver bye")))
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _, err := ws.ReadMessage()
	var ce *websocket.CloseError
	assert.Assert(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, ce.Code, 4002)
	assert.Equal(t, ce.Text, "driver bye")
}

// A driver that drops the connection without a close frame (chromedriver
// does, when the session ends) drops the client's too: no close frame with
// a reserved code (1006) that the client would reject as a protocol error.
func TestBiDiDriverDrops(t *testing.T) {
	_, ws := wdextBiDi(t)
	assert.NilError(t, ws.WriteMessage(websocket.TextMessage, []byte("drop")))
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _, err := ws.ReadMessage()
	var ce *websocket.CloseError
	assert.Assert(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, ce.Code, websocket.CloseAbnormalClosure)
}
