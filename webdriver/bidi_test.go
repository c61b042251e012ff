package webdriver_test

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

// fakeBiDi is an upstream driver whose new-session reply announces a BiDi
// websocket. The websocket echoes every message, streaming; the text
// "close CODE TEXT" makes it close with that code, "drop" makes it drop
// the connection without a close frame, "big N" makes it send N bytes.
// Close frames it receives go to closes.
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
			kind, rd, err := c.NextReader()
			if err != nil {
				var ce *websocket.CloseError
				if errors.As(err, &ce) {
					f.closes <- ce
				}
				return
			}
			// Commands are short; anything longer streams back as it
			// comes, so that the echo holds no message whole.
			head := make([]byte, 64)
			n, err := io.ReadFull(rd, head)
			head = head[:n]
			if err == nil {
				w, err := c.NextWriter(kind)
				if err != nil {
					return
				}
				w.Write(head)
				io.Copy(w, rd)
				// On a failure, reading on finds why: a close frame.
				w.Close()
				continue
			}
			data := head
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
				if size, ok := strings.CutPrefix(string(data), "big "); ok {
					n, _ := strconv.Atoi(size)
					data = bytes.Repeat([]byte("b"), n)
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
	return wdextBiDiGuarded(t, webdriver.Guard{})
}

// wdextBiDiGuarded is wdextBiDi behind guard (whose AllowedOrigins it
// sets), listening as wdext serve does.
func wdextBiDiGuarded(t *testing.T, guard webdriver.Guard) (*fakeBiDi, *websocket.Conn) {
	f := newFakeBiDi(t)
	u, _ := url.Parse(f.srv.URL)
	const origin = "http://allowed.test"
	guard.AllowedOrigins = []string{origin}
	srv := webdriver.NewServer(webdriver.Config{
		Upstream: driver.Remote{URL: u},
		Guard:    guard,
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener = webdriver.ErrorListener(hs.Listener)
	hs.Start()
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

// A message over Guard.MaxBody, either way, ends the connection with
// 1009 "message too big" to both ends, as a websocket endpoint does,
// and is never passed on in full.
func TestBiDiMessageTooBig(t *testing.T) {
	t.Run("from the client", func(t *testing.T) {
		f, ws := wdextBiDiGuarded(t, webdriver.Guard{MaxBody: 1 << 20})
		assert.NilError(t, ws.WriteMessage(websocket.TextMessage, bytes.Repeat([]byte("x"), 2<<20)))
		expectClose(t, ws, websocket.CloseMessageTooBig)
		select {
		case ce := <-f.closes:
			assert.Equal(t, ce.Code, websocket.CloseMessageTooBig)
		case <-time.After(10 * time.Second):
			t.Fatal("the driver got no close frame")
		}
	})
	t.Run("from the driver", func(t *testing.T) {
		// The driver gets 1009 too, but the fake, still writing the
		// rest of its message when wdext hangs up, may never read it.
		_, ws := wdextBiDiGuarded(t, webdriver.Guard{MaxBody: 1 << 20})
		assert.NilError(t, ws.WriteMessage(websocket.TextMessage, []byte("big 2097152")))
		expectClose(t, ws, websocket.CloseMessageTooBig)
	})
	t.Run("at the limit", func(t *testing.T) {
		_, ws := wdextBiDiGuarded(t, webdriver.Guard{MaxBody: 1 << 20})
		assert.NilError(t, ws.WriteMessage(websocket.TextMessage, []byte("big 1048576")))
		ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, data, err := ws.ReadMessage()
		assert.NilError(t, err)
		assert.Equal(t, len(data), 1<<20)
	})
}

func expectClose(t *testing.T, ws *websocket.Conn, code int) {
	t.Helper()
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, _, err := ws.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		assert.Assert(t, errors.As(err, &ce), "%v", err)
		assert.Equal(t, ce.Code, code, "%v", err)
		return
	}
}

// Messages stream through frame by frame: a large one, in many
// fragments, arrives whole and unchanged, and wdext never holds it.
func TestBiDiStreams(t *testing.T) {
	const size, fragment = 64 << 20, 1 << 20
	_, ws := wdextBiDi(t)
	msg := make([]byte, size)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sent := make(chan error, 1)
	go func() { // owned by the test: it waits on sent
		w, err := ws.NextWriter(websocket.BinaryMessage)
		if err != nil {
			sent <- err
			return
		}
		for i := 0; i < size; i += fragment {
			if _, err := w.Write(msg[i : i+fragment]); err != nil {
				sent <- err
				return
			}
		}
		sent <- w.Close()
	}()
	ws.SetReadDeadline(time.Now().Add(60 * time.Second))
	kind, rd, err := ws.NextReader()
	assert.NilError(t, err)
	assert.Equal(t, kind, websocket.BinaryMessage)
	same, got := true, 0
	buf := make([]byte, 64<<10)
	for {
		n, err := rd.Read(buf)
		same = same && bytes.Equal(buf[:n], msg[got:got+n])
		got += n
		if err == io.EOF {
			break
		}
		assert.NilError(t, err)
	}
	assert.NilError(t, <-sent)
	runtime.ReadMemStats(&after)
	assert.Equal(t, got, size)
	assert.Assert(t, same, "the message changed on the way")
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d MiB message there and back allocated %.1f MiB", size>>20, float64(allocated)/(1<<20))
	assert.Assert(t, allocated < size/4, "a %d MiB message there and back allocated %.1f MiB", size>>20, float64(allocated)/(1<<20))
}

// A broken websocket handshake is refused with a W3C error, as any
// other bad request is.
func TestBiDiBadHandshake(t *testing.T) {
	_, ws := wdextBiDi(t)
	req, _ := http.NewRequest("GET", "http://"+ws.RemoteAddr().String()+"/session/s1", nil)
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Sec-WebSocket-Version", "13") // and no Sec-WebSocket-Key
	resp, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, resp.StatusCode, 400, "%s", body)
	assert.Equal(t, resp.Header.Get("Content-Type"), wire.ContentType)
	assertErrorShape(t, body, wire.InvalidArgument)
	assert.Assert(t, bytes.Contains(body, []byte("Sec-WebSocket-Key")), "%s", body)
}
