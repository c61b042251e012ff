package webdriver_test

import (
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"gotest.tools/v3/assert"
)

// bidiCall sends one BiDi command and returns its reply, skipping events.
func bidiCall(t *testing.T, ws *websocket.Conn, id int, method string, params any) map[string]any {
	t.Helper()
	assert.NilError(t, ws.WriteJSON(map[string]any{"id": id, "method": method, "params": params}))
	ws.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		var msg map[string]any
		assert.NilError(t, ws.ReadJSON(&msg), "reading the reply to %s", method)
		if msg["id"] == float64(id) {
			return msg
		}
	}
}

// A session asked with webSocketUrl: true gets a BiDi URL on wdext's own
// address, and BiDi commands go through it both ways; a close from the
// client ends the connection cleanly with the code it sent.
func TestBiDiThroughWdext(t *testing.T) {
	env := chromiumtest.Start(t)
	c := newWire(t, env.URL, true)
	id, caps := c.newSession(newSessionBody(map[string]any{"webSocketUrl": true}))

	wsURL, _ := caps["webSocketUrl"].(string)
	assert.Assert(t, wsURL != "", "no webSocketUrl in %v", caps)
	u, err := url.Parse(wsURL)
	assert.NilError(t, err)
	base, _ := url.Parse(env.URL)
	assert.Equal(t, u.Host, base.Host, "webSocketUrl %s does not point at wdext", wsURL)
	assert.Equal(t, u.Path, "/session/"+id)
	sess, ok := env.Server.Sessions().Get(id)
	assert.Assert(t, ok)
	assert.Assert(t, sess.BiDiURL != "" && sess.BiDiURL != wsURL, "upstream BiDi URL %q", sess.BiDiURL)

	ws, resp, err := websocket.DefaultDialer.Dial(wsURL, nil)
	assert.NilError(t, err)
	resp.Body.Close()
	defer ws.Close()

	tree := bidiCall(t, ws, 1, "browsingContext.getTree", map[string]any{})
	assert.Equal(t, tree["type"], "success", "%v", tree)
	contexts := tree["result"].(map[string]any)["contexts"].([]any)
	assert.Assert(t, len(contexts) >= 1, "%v", tree)
	ctxID := contexts[0].(map[string]any)["context"].(string)
	// The BiDi context is the classic window handle.
	var handle string
	c.do("GET", "/session/"+id+"/window", nil).ok(t, &handle)
	assert.Equal(t, ctxID, handle)

	eval := bidiCall(t, ws, 2, "script.evaluate", map[string]any{
		"expression": "6 * 7", "target": map[string]any{"context": ctxID}, "awaitPromise": false,
	})
	assert.Equal(t, eval["type"], "success", "%v", eval)
	result := eval["result"].(map[string]any)["result"].(map[string]any)
	assert.DeepEqual(t, result, map[string]any{"type": "number", "value": float64(42)})

	// An error reply passes through as the driver wrote it.
	bad := bidiCall(t, ws, 3, "no.suchMethod", map[string]any{})
	assert.Equal(t, bad["type"], "error", "%v", bad)
	assert.Equal(t, bad["error"], "unknown command", "%v", bad)

	// Close with a code: the far end answers the close handshake and the
	// connection ends with that code, not an abnormal closure.
	assert.NilError(t, ws.WriteControl(websocket.CloseMessage,
		websocket.FormatCloseMessage(websocket.CloseNormalClosure, "done"), time.Now().Add(5*time.Second)))
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, msg, err := ws.ReadMessage()
		if err == nil {
			t.Logf("message after close: %s", msg)
			continue
		}
		var ce *websocket.CloseError
		assert.Assert(t, errors.As(err, &ce), "connection ended without a close frame: %v", err)
		assert.Equal(t, ce.Code, websocket.CloseNormalClosure, "%v", err)
		break
	}

	// The session is still usable over classic HTTP.
	var title string
	c.do("GET", "/session/"+id+"/title", nil).ok(t, &title)
	assert.Equal(t, title, "")
}

// When the session ends while BiDi connections are open, a connection
// through wdext ends the way one straight to chromedriver does.
func TestBiDiSessionDeleted(t *testing.T) {
	env := chromiumtest.Start(t)
	c := newWire(t, env.URL, true)
	id, caps := c.newSession(newSessionBody(map[string]any{"webSocketUrl": true}))
	sess, _ := env.Server.Sessions().Get(id)
	ends := map[string]string{}
	conns := map[string]*websocket.Conn{}
	for name, u := range map[string]string{"chromedriver": sess.BiDiURL, "wdext": caps["webSocketUrl"].(string)} {
		ws, resp, err := websocket.DefaultDialer.Dial(u, nil)
		assert.NilError(t, err, name)
		resp.Body.Close()
		defer ws.Close()
		conns[name] = ws
	}
	c.do("DELETE", "/session/"+id, nil).ok(t, nil)
	for name, ws := range conns {
		ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				var ce *websocket.CloseError
				if errors.As(err, &ce) {
					ends[name] = fmt.Sprint("close ", ce.Code)
				} else {
					ends[name] = err.Error()
				}
				break
			}
		}
	}
	t.Log(ends)
	assert.Equal(t, ends["wdext"], ends["chromedriver"])
}

// BiDi on a session wdext does not know, or that has no BiDi, is a W3C
// error, not a hang or an upgrade.
func TestBiDiWithoutWebSocketURL(t *testing.T) {
	env := chromiumtest.Start(t)
	c := newWire(t, env.URL, true)
	id, caps := c.newSession(newSessionBody(nil))
	_, has := caps["webSocketUrl"]
	assert.Assert(t, !has, "%v", caps)

	wsBase := "ws" + env.URL[len("http"):]
	_, resp, err := websocket.DefaultDialer.Dial(wsBase+"/session/"+id, nil)
	assert.Assert(t, err != nil)
	assert.Equal(t, resp.StatusCode, 404)
	resp.Body.Close()
	_, resp, err = websocket.DefaultDialer.Dial(wsBase+"/session/nope", nil)
	assert.Assert(t, err != nil)
	assert.Equal(t, resp.StatusCode, 404)
	resp.Body.Close()
}
