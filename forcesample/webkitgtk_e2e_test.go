package forcesample_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine/webkitgtk"
	"github.com/wdext/wdext/engine/webkitgtk/webkitgtktest"
	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
)

// wkAwait runs script as the body of an async function in the current
// frame and returns its value (or "ERROR …").
func wkAwait(c *e2e.RawSession, script string) any {
	var v any
	c.Async(`const done = arguments[arguments.length-1];
		Promise.resolve((async () => { `+script+` })()).then(done, (e) => done("ERROR " + e));`, &v)
	return v
}

// switchFrame switches to the child frame whose element has id.
func switchFrame(c *e2e.RawSession, id string) {
	var el map[string]string
	c.Call("POST", "/element", map[string]any{"using": "css selector", "value": "#" + id}, &el)
	c.Call("POST", "/frame", map[string]any{"id": el}, nil)
}

// On WebKitGTK, through the polyfill: profilers in the top document (two
// of them), a cross-site iframe, a frame nested in it and a second window
// each get exactly one sample per call, and the client's current window
// and frame (here the nested frame) are what they were. Both ways: through
// the inspector (what the command does for sessions wdext runs) and by
// the WebDriver walk (for WebKitGTK drivers wdext does not run).
func TestForceSampleWebKitGTK(t *testing.T) {
	env := webkitgtktest.Start(t, forcesample.Register, registerWalk)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	for _, force := range []string{"/forcesample", "/wdext-test/walk"} {
		t.Run(strings.TrimPrefix(force, "/"), func(t *testing.T) { forceEverywhere(t, env, pages, force) })
	}
}

// registerWalk adds POST /session/{id}/wdext-test/walk: the force by the
// WebDriver walk, which the command uses for drivers wdext does not run.
func registerWalk(srv *webdriver.Server) {
	srv.Handle("POST", "/session/{id}/wdext-test/walk", func(ctx context.Context, sess *session.Session, _ []byte) (any, error) {
		return nil, webkitgtk.NewWalker(driver.SessionClient{Base: sess.Upstream, ID: sess.ID}).ForceSample(ctx)
	})
}

func forceEverywhere(t *testing.T, env *webkitgtktest.Env, pages *e2e.Pages, force string) {
	c := e2e.NewRawSession(t, env.URL, map[string]any{})

	c.Call("POST", "/url", map[string]any{"url": pages.A + "/forcesample/top.html?cross=" + pages.B + "&nested=" + pages.C}, nil)
	wkAwait(c, `await window.framesLoaded; window.second = new Profiler({sampleInterval: 600000, maxBufferSize: 100});`)
	var first string
	c.Call("GET", "/window", nil, &first)
	// WebKitGTK blocks window.open from scripts: New Window instead.
	var nw struct{ Handle string }
	c.Call("POST", "/window/new", map[string]any{"type": "window"}, &nw)
	other := nw.Handle
	c.Call("POST", "/window", map[string]any{"handle": other}, nil)
	c.Call("POST", "/url", map[string]any{"url": pages.D + "/forcesample/frame.html"}, nil)
	for i := 0; ; i++ {
		var ok bool
		c.Call("POST", "/execute/sync", map[string]any{"args": []any{}, "script": `return document.readyState === "complete" && !!window.probe && !!probe.profiler`}, &ok)
		if ok {
			break
		}
		assert.Assert(t, i < 400, "second window did not load")
		time.Sleep(25 * time.Millisecond)
	}
	c.Call("POST", "/window", map[string]any{"handle": first}, nil)
	switchFrame(c, "cross")
	switchFrame(c, "nested")
	var before string
	c.Call("POST", "/execute/sync", map[string]any{"args": []any{}, "script": `return location.href`}, &before)
	assert.Assert(t, strings.HasPrefix(before, pages.C), before)

	const K = 3
	for range K {
		c.Call("POST", force, map[string]any{}, nil)
	}

	// The client is where it was.
	var after, window string
	c.Call("POST", "/execute/sync", map[string]any{"args": []any{}, "script": `return location.href`}, &after)
	c.Call("GET", "/window", nil, &window)
	assert.Equal(t, after, before)
	assert.Equal(t, window, first)

	// Each profiler has its sample at construction and the K forced.
	count := `return (await probe.profiler.stop()).samples.length;`
	assert.Equal(t, wkAwait(c, count), float64(K+1), "nested frame")
	c.Call("POST", "/frame/parent", map[string]any{}, nil)
	assert.Equal(t, wkAwait(c, count), float64(K+1), "cross-site frame")
	c.Call("POST", "/frame", map[string]any{"id": nil}, nil)
	assert.Equal(t, wkAwait(c, count), float64(K+1), "top document")
	assert.Equal(t, wkAwait(c, `return (await window.second.stop()).samples.length;`), float64(K+1), "second profiler of the top document")
	c.Call("POST", "/window", map[string]any{"handle": other}, nil)
	assert.Equal(t, wkAwait(c, count), float64(K+1), "second window")

	if force == "/forcesample" {
		// The inspector switches no frame: a client command sent while
		// forces run lands where the client is (the nested frame).
		c.Call("POST", "/window", map[string]any{"handle": first}, nil)
		switchFrame(c, "cross")
		switchFrame(c, "nested")
		done := make(chan struct{})
		go func() { // owned by the test: waited for below
			defer close(done)
			for range 10 {
				c.Call("POST", force, map[string]any{}, nil)
			}
		}()
		for range 20 {
			var here string
			c.Call("POST", "/execute/sync", map[string]any{"args": []any{}, "script": `return location.href`}, &here)
			assert.Equal(t, here, before)
		}
		<-done
	}

	// Stopped profilers, and a page without any: fine.
	c.Call("POST", force, map[string]any{}, nil)
	c.Call("POST", "/url", map[string]any{"url": "about:blank"}, nil)
	c.Call("POST", force, map[string]any{}, nil)
}
