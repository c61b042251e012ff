package forcesample_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/internal/e2e"
)

// wk is a raw WebDriver client for one WebKitGTK session through wdext.
type wk struct {
	t    *testing.T
	base string // …/session/ID
}

func (c *wk) call(method, path string, body any, out any) {
	c.t.Helper()
	var data []byte
	if body != nil {
		data, _ = json.Marshal(body)
	}
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(data))
	assert.NilError(c.t, err)
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	assert.NilError(c.t, err)
	defer resp.Body.Close()
	var v struct {
		Value json.RawMessage `json:"value"`
	}
	assert.NilError(c.t, json.NewDecoder(resp.Body).Decode(&v))
	assert.Equal(c.t, resp.StatusCode, 200, "%s %s: %s", method, path, v.Value)
	if out != nil {
		assert.NilError(c.t, json.Unmarshal(v.Value, out))
	}
}

func (c *wk) await(script string) any {
	c.t.Helper()
	var v any
	c.call("POST", "/execute/async", map[string]any{"args": []any{}, "script": `const done = arguments[arguments.length-1];
		Promise.resolve((async () => { ` + script + ` })()).then(done, (e) => done("ERROR " + e));`}, &v)
	return v
}

func (c *wk) switchFrame(id string) {
	c.t.Helper()
	var el map[string]string
	c.call("POST", "/element", map[string]any{"using": "css selector", "value": "#" + id}, &el)
	c.call("POST", "/frame", map[string]any{"id": el}, nil)
}

// On WebKitGTK, through the polyfill: profilers in the top document (two
// of them), a cross-site iframe, a frame nested in it and a second window
// each get exactly one sample per call, and the client's current window
// and frame (here the nested frame) are what they were.
func TestForceSampleWebKitGTK(t *testing.T) {
	env := e2e.StartWebKitGTK(t, forcesample.Register)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	c0 := &wk{t: t, base: env.URL}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	c0.call("POST", "/session", map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{}}}, &created)
	c := &wk{t: t, base: env.URL + "/session/" + created.SessionID}
	t.Cleanup(func() {
		req, _ := http.NewRequest("DELETE", c.base, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})

	c.call("POST", "/url", map[string]any{"url": pages.A + "/forcesample/top.html?cross=" + pages.B + "&nested=" + pages.C}, nil)
	c.await(`await window.framesLoaded; window.second = new Profiler({sampleInterval: 10, maxBufferSize: 100});`)
	var first string
	c.call("GET", "/window", nil, &first)
	// WebKitGTK blocks window.open from scripts: New Window instead.
	var nw struct{ Handle string }
	c.call("POST", "/window/new", map[string]any{"type": "window"}, &nw)
	other := nw.Handle
	c.call("POST", "/window", map[string]any{"handle": other}, nil)
	c.call("POST", "/url", map[string]any{"url": pages.D + "/forcesample/frame.html"}, nil)
	for i := 0; ; i++ {
		var ok bool
		c.call("POST", "/execute/sync", map[string]any{"args": []any{}, "script": `return document.readyState === "complete" && !!window.probe && !!probe.profiler`}, &ok)
		if ok {
			break
		}
		assert.Assert(t, i < 400, "second window did not load")
		time.Sleep(25 * time.Millisecond)
	}
	c.call("POST", "/window", map[string]any{"handle": first}, nil)
	c.switchFrame("cross")
	c.switchFrame("nested")
	var before string
	c.call("POST", "/execute/sync", map[string]any{"args": []any{}, "script": `return location.href`}, &before)
	assert.Assert(t, strings.HasPrefix(before, pages.C), before)

	const K = 3
	for range K {
		c.call("POST", "/forcesample", map[string]any{}, nil)
	}

	// The client is where it was.
	var after, window string
	c.call("POST", "/execute/sync", map[string]any{"args": []any{}, "script": `return location.href`}, &after)
	c.call("GET", "/window", nil, &window)
	assert.Equal(t, after, before)
	assert.Equal(t, window, first)

	count := `return (await probe.profiler.stop()).samples.length;`
	assert.Equal(t, c.await(count), float64(K), "nested frame")
	c.call("POST", "/frame/parent", map[string]any{}, nil)
	assert.Equal(t, c.await(count), float64(K), "cross-site frame")
	c.call("POST", "/frame", map[string]any{"id": nil}, nil)
	assert.Equal(t, c.await(count), float64(K), "top document")
	assert.Equal(t, c.await(`return (await window.second.stop()).samples.length;`), float64(K), "second profiler of the top document")
	c.call("POST", "/window", map[string]any{"handle": other}, nil)
	assert.Equal(t, c.await(count), float64(K), "second window")

	// Stopped profilers, and a page without any: fine.
	c.call("POST", "/forcesample", map[string]any{}, nil)
	c.call("POST", "/url", map[string]any{"url": "about:blank"}, nil)
	c.call("POST", "/forcesample", map[string]any{}, nil)
}
