package webdriver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"gotest.tools/v3/assert"
)

// What curl -d sends (application/x-www-form-urlencoded) works through
// wdext as it does with chromedriver alone: a program's POST is JSON
// whatever its Content-Type says.
func TestCurlContentTypeWithChromedriver(t *testing.T) {
	env := chromiumtest.Start(t)
	post := func(path, body string) (int, []byte) {
		resp, err := http.Post(env.URL+path, "application/x-www-form-urlencoded", strings.NewReader(body))
		assert.NilError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	caps, _ := json.Marshal(map[string]any{"capabilities": map[string]any{"alwaysMatch": chromiumtest.Capabilities()}})
	status, body := post("/session", string(caps))
	assert.Equal(t, status, 200, "%s", body)
	var created struct {
		Value struct{ SessionID string } `json:"value"`
	}
	assert.NilError(t, json.Unmarshal(body, &created))
	id := created.Value.SessionID
	status, body = post("/session/"+id+"/execute/sync", `{"script":"return 6*7","args":[]}`)
	assert.Equal(t, status, 200, "%s", body)
	assert.Equal(t, string(body), `{"value":42}`)
	req, _ := http.NewRequest("DELETE", env.URL+"/session/"+id, nil)
	resp, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	resp.Body.Close()
}
