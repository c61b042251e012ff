package webdriver_test

import (
	"encoding/json"
	"testing"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"gotest.tools/v3/assert"
)

// Chunked requests work with chromedriver, which refuses them itself:
// wdext sends the body on with its length.
func TestChunkedCommandsWithChromedriver(t *testing.T) {
	env := chromiumtest.Start(t)
	newSession, _ := json.Marshal(newSessionBody(nil))
	status, _, reply := post(t, env.URL+"/session", newSession, true)
	assert.Equal(t, status, 200, "%s", reply)
	var created struct {
		Value struct {
			SessionID string `json:"sessionId"`
		} `json:"value"`
	}
	assert.NilError(t, json.Unmarshal(reply, &created))
	id := created.Value.SessionID
	assert.Assert(t, id != "", "%s", reply)
	c := newWire(t, env.URL, true)
	defer c.do("DELETE", "/session/"+id, nil)

	status, _, reply = post(t, env.URL+"/session/"+id+"/execute/sync", []byte(`{"script":"return arguments[0] + 1","args":[41]}`), true)
	assert.Equal(t, status, 200, "%s", reply)
	assert.Equal(t, string(reply), `{"value":42}`)

	status, _, reply = post(t, env.URL+"/session/"+id+"/url", []byte(`{"url":"about:blank"}`), true)
	assert.Equal(t, status, 200, "%s", reply)
}
