package webdriver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tebeka/selenium"
	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/wire"
)

// outcome is what the conformance comparison looks at for one command:
// the status, and for errors the code and (normalised) message; for
// commands whose result does not depend on the run, the normalised value.
type outcome struct {
	Step    string
	Status  int
	Error   string
	Message string
	Value   string
}

func (o outcome) String() string {
	if o.Error != "" {
		return fmt.Sprintf("%-28s %d %s: %q", o.Step, o.Status, o.Error, o.Message)
	}
	return fmt.Sprintf("%-28s %d %s", o.Step, o.Status, o.Value)
}

// recorder runs a command sequence on one endpoint and notes the outcomes.
type recorder struct {
	t   *testing.T
	c   *rawClient
	out []outcome
}

// note records r under step; the value counts only when cmpValue is set.
func (rec *recorder) note(step string, r reply, cmpValue bool) reply {
	o := outcome{Step: step, Status: r.Status}
	if r.Err != nil {
		o.Error, o.Message = string(r.Err.Code), normalise(r.Err.Message)
	} else if cmpValue {
		o.Value = normalise(string(r.Value))
	}
	rec.out = append(rec.out, o)
	return r
}

func (rec *recorder) run(step, method, path string, body any, cmpValue bool) reply {
	rec.t.Helper()
	return rec.note(step, rec.c.do(method, path, body), cmpValue)
}

func elementRef(t *testing.T, r reply) string {
	t.Helper()
	var el map[string]string
	r.ok(t, &el)
	assert.Assert(t, el[elementKey] != "", "%s", r.Body)
	return el[elementKey]
}

// conformanceSequence drives one session through the classic commands the
// issue names, and returns what each answered. newSession is the body to
// create the session with; page is the conformance page's URL.
func conformanceSequence(t *testing.T, c *rawClient, newSession map[string]any, page string) []outcome {
	rec := &recorder{t: t, c: c}
	run := rec.run

	// New session: compare which capabilities come back, not their values
	// (ports, directories and versions are per run).
	r := c.do("POST", "/session", newSession)
	var created struct {
		SessionID    string         `json:"sessionId"`
		Capabilities map[string]any `json:"capabilities"`
	}
	r.ok(t, &created)
	keys := make([]string, 0, len(created.Capabilities))
	for k := range created.Capabilities {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	rec.out = append(rec.out, outcome{Step: "new session", Status: r.Status, Value: strings.Join(keys, ",") + " browserName=" + fmt.Sprint(created.Capabilities["browserName"])})
	id := created.SessionID
	s := "/session/" + id
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			c.do("DELETE", s, nil)
		}
	})

	run("set timeouts", "POST", s+"/timeouts", map[string]any{"script": 500}, true)
	run("get timeouts", "GET", s+"/timeouts", nil, true)
	run("navigate", "POST", s+"/url", map[string]any{"url": page}, true)
	run("get url", "GET", s+"/url", nil, true)
	run("title", "GET", s+"/title", nil, true)
	run("navigate bad url", "POST", s+"/url", map[string]any{"url": 42}, false)

	// Elements.
	button := elementRef(t, run("find element", "POST", s+"/element", map[string]any{"using": "css selector", "value": "#button"}, false))
	run("find no element", "POST", s+"/element", map[string]any{"using": "css selector", "value": "#nope"}, false)
	run("find bad selector", "POST", s+"/element", map[string]any{"using": "css selector", "value": "[[["}, false)
	run("find elements", "POST", s+"/elements", map[string]any{"using": "css selector", "value": "button"}, true)
	run("element text", "GET", s+"/element/"+button+"/text", nil, true)
	run("element name", "GET", s+"/element/"+button+"/name", nil, true)
	run("stale element", "GET", s+"/element/f.0.d.0.e.999/text", nil, false)
	run("click", "POST", s+"/element/"+button+"/click", map[string]any{}, true)
	run("click count", "POST", s+"/execute/sync", map[string]any{"script": "return window.clicks", "args": []any{}}, true)

	// Scripts.
	run("execute sync", "POST", s+"/execute/sync", map[string]any{"script": "return arguments[0] + 1", "args": []any{41}}, true)
	run("execute sync element", "POST", s+"/execute/sync", map[string]any{"script": "return arguments[0].id", "args": []any{map[string]any{elementKey: button}}}, true)
	run("execute sync throws", "POST", s+"/execute/sync", map[string]any{"script": "throw new Error('boom')", "args": []any{}}, false)
	run("execute sync bad args", "POST", s+"/execute/sync", map[string]any{"script": "return 1", "args": "nope"}, false)
	run("execute async", "POST", s+"/execute/async", map[string]any{"script": "arguments[0](7)", "args": []any{}}, true)
	run("execute async throws", "POST", s+"/execute/async", map[string]any{"script": "throw new Error('async boom')", "args": []any{}}, false)
	run("execute async timeout", "POST", s+"/execute/async", map[string]any{"script": "/* never calls back */", "args": []any{}}, false)

	// Screenshots: the value is a PNG; its pixels are not compared.
	for _, shot := range []struct{ step, path string }{
		{"screenshot", s + "/screenshot"},
		{"element screenshot", s + "/element/" + button + "/screenshot"},
	} {
		r := run(shot.step, "GET", shot.path, nil, false)
		var b64 string
		r.ok(t, &b64)
		png, err := base64.StdEncoding.DecodeString(b64)
		assert.NilError(t, err)
		assert.Assert(t, bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")), "%s is not a PNG", shot.step)
	}

	// Windows.
	var first string
	run("window handle", "GET", s+"/window", nil, true).ok(t, &first)
	run("window handles", "GET", s+"/window/handles", nil, true)
	var nw struct{ Handle, Type string }
	run("new window", "POST", s+"/window/new", map[string]any{"type": "tab"}, true).ok(t, &nw)
	run("window handles (2)", "GET", s+"/window/handles", nil, true)
	run("switch to new window", "POST", s+"/window", map[string]any{"handle": nw.Handle}, true)
	run("new window title", "GET", s+"/title", nil, true)
	run("close window", "DELETE", s+"/window", nil, true)
	run("closed window title", "GET", s+"/title", nil, false)
	run("switch to no window", "POST", s+"/window", map[string]any{"handle": "nope"}, false)
	run("switch back", "POST", s+"/window", map[string]any{"handle": first}, true)
	run("window handles (1)", "GET", s+"/window/handles", nil, true)

	// Cookies.
	run("add cookie", "POST", s+"/cookie", map[string]any{"cookie": map[string]any{"name": "c1", "value": "v1"}}, true)
	run("add cookie bad domain", "POST", s+"/cookie", map[string]any{"cookie": map[string]any{"name": "c2", "value": "v2", "domain": "example.com"}}, false)
	run("get cookie", "GET", s+"/cookie/c1", nil, true)
	run("get cookies", "GET", s+"/cookie", nil, true)
	run("delete cookie", "DELETE", s+"/cookie/c1", nil, true)
	run("get deleted cookie", "GET", s+"/cookie/c1", nil, false)
	run("delete all cookies", "DELETE", s+"/cookie", nil, true)

	// Alerts.
	run("alert text, no alert", "GET", s+"/alert/text", nil, false)
	run("accept, no alert", "POST", s+"/alert/accept", map[string]any{}, false)
	find := func(sel string) string {
		return elementRef(t, c.do("POST", s+"/element", map[string]any{"using": "css selector", "value": sel}))
	}
	openAlert := func(step, sel string) {
		run(step, "POST", s+"/element/"+find(sel)+"/click", map[string]any{}, true)
		// The dialog opens from the click's event handler; wait until the
		// driver sees it (not recorded: how long it takes varies).
		for i := 0; i < 100; i++ {
			if c.do("GET", s+"/alert/text", nil).Err == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("%s: no dialog opened", step)
	}
	openAlert("open alert", "#alert")
	run("alert text", "GET", s+"/alert/text", nil, true)
	run("command with alert open", "GET", s+"/title", nil, true)
	openAlert("open alert again", "#alert")
	run("accept alert", "POST", s+"/alert/accept", map[string]any{}, true)
	openAlert("open confirm", "#confirm")
	run("dismiss confirm", "POST", s+"/alert/dismiss", map[string]any{}, true)
	run("confirm result", "POST", s+"/execute/sync", map[string]any{"script": "return window.confirmed", "args": []any{}}, true)
	openAlert("open prompt", "#prompt")
	run("prompt text", "GET", s+"/alert/text", nil, true)
	run("send prompt text", "POST", s+"/alert/text", map[string]any{"text": "wdext"}, true)
	run("accept prompt", "POST", s+"/alert/accept", map[string]any{}, true)
	run("prompt result", "POST", s+"/execute/sync", map[string]any{"script": "return window.prompted", "args": []any{}}, true)

	// Actions.
	input := find("#input")
	run("focus input", "POST", s+"/element/"+input+"/click", map[string]any{}, true)
	run("key actions", "POST", s+"/actions", map[string]any{"actions": []any{map[string]any{
		"type": "key", "id": "keyboard", "actions": []any{
			map[string]any{"type": "keyDown", "value": "a"}, map[string]any{"type": "keyUp", "value": "a"},
			map[string]any{"type": "keyDown", "value": "b"}, map[string]any{"type": "keyUp", "value": "b"},
		},
	}}}, true)
	run("typed text", "POST", s+"/execute/sync", map[string]any{"script": "return document.getElementById('input').value", "args": []any{}}, true)
	run("pointer actions", "POST", s+"/actions", map[string]any{"actions": []any{map[string]any{
		"type": "pointer", "id": "mouse", "parameters": map[string]any{"pointerType": "mouse"}, "actions": []any{
			map[string]any{"type": "pointerMove", "origin": map[string]any{elementKey: find("#target")}, "x": 0, "y": 0},
			map[string]any{"type": "pointerDown", "button": 0},
			map[string]any{"type": "pointerUp", "button": 0},
		},
	}}}, true)
	run("pointer events", "POST", s+"/execute/sync", map[string]any{"script": "return window.pointer", "args": []any{}}, true)
	run("hold shift", "POST", s+"/actions", map[string]any{"actions": []any{map[string]any{
		"type": "key", "id": "keyboard", "actions": []any{map[string]any{"type": "keyDown", "value": "\uE008"}},
	}}}, true)
	run("release actions", "DELETE", s+"/actions", nil, true)
	run("bad actions", "POST", s+"/actions", map[string]any{"actions": []any{map[string]any{"type": "bogus", "id": "x", "actions": []any{}}}}, false)

	// A command the driver does not have, under the session.
	run("unknown session command", "GET", s+"/nope", nil, false)

	run("delete session", "DELETE", s, nil, true)
	deleted = true
	run("command after delete", "GET", s+"/title", nil, false)
	return rec.out
}

// compareOutcomes fails the test for each step where got differs from want.
func compareOutcomes(t *testing.T, what string, want, got []outcome) {
	t.Helper()
	assert.Equal(t, len(got), len(want), "%s: number of steps", what)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s differs from chromedriver at step %d:\n  chromedriver: %v\n  %s: %v", what, i, want[i], what, got[i])
		}
	}
}

// chromedriverSequence is the conformance sequence's outcomes straight
// to a chromedriver at path, with what wdext adds in managed mode, so
// that its browser runs as wdext's do.
func chromedriverSequence(t *testing.T, path, page string) []outcome {
	direct := &chromium.Driver{Path: path}
	t.Cleanup(func() { direct.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in, err := direct.Current(ctx)
	assert.NilError(t, err)
	return conformanceSequence(t, newWire(t, in.URL.String(), false), withManagedDefaults(newSessionBody(nil)), page)
}

// The same command sequence, straight to a chromedriver and through wdext,
// gets the same statuses, error codes and messages.
func TestConformanceWithChromedriver(t *testing.T) {
	path := chromiumtest.Require(t)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	page := pages.A + "/webdriver/conformance.html"

	want := chromedriverSequence(t, path, page)
	for _, o := range want {
		t.Log("chromedriver: ", o)
	}

	env := chromiumtest.Start(t)
	got := conformanceSequence(t, newWire(t, env.URL, true), newSessionBody(nil), page)
	compareOutcomes(t, "wdext", want, got)
	got = conformanceSequence(t, newWire(t, env.URL+"/wd/hub", true), newSessionBody(nil), page)
	compareOutcomes(t, "wdext /wd/hub", want, got)
	assert.Equal(t, env.Server.Sessions().Len(), 0, "wdext still holds deleted sessions")
}

// tebeka/selenium, which defaults to the /wd/hub prefix and sends no
// Content-Type, drives the same kinds of commands through wdext.
func TestConformanceTebekaWdHub(t *testing.T) {
	env := chromiumtest.Start(t)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	wd, err := selenium.NewRemote(chromiumtest.Capabilities(), env.URL+"/wd/hub")
	assert.NilError(t, err)
	quit := false
	t.Cleanup(func() {
		if !quit {
			wd.Quit()
		}
	})
	assert.Equal(t, env.Server.Sessions().Len(), 1)

	assert.NilError(t, wd.SetAsyncScriptTimeout(500*time.Millisecond))
	assert.NilError(t, wd.Get(pages.A+"/webdriver/conformance.html"))
	title, err := wd.Title()
	assert.NilError(t, err)
	assert.Equal(t, title, "wdext conformance")

	button, err := wd.FindElement(selenium.ByCSSSelector, "#button")
	assert.NilError(t, err)
	_, err = wd.FindElement(selenium.ByCSSSelector, "#nope")
	assertSeleniumError(t, err, wire.NoSuchElement)
	assert.NilError(t, button.Click())
	v, err := wd.ExecuteScript("return window.clicks", nil)
	assert.NilError(t, err)
	assert.Equal(t, v, float64(1))

	v, err = wd.ExecuteScript("return arguments[0] + 1", []any{41})
	assert.NilError(t, err)
	assert.Equal(t, v, float64(42))
	_, err = wd.ExecuteScript("throw new Error('boom')", nil)
	assertSeleniumError(t, err, wire.JavascriptError)
	v, err = wd.ExecuteScriptAsync("arguments[0](7)", nil)
	assert.NilError(t, err)
	assert.Equal(t, v, float64(7))
	_, err = wd.ExecuteScriptAsync("/* never calls back */", nil)
	assertSeleniumError(t, err, wire.ScriptTimeout)

	png, err := wd.Screenshot()
	assert.NilError(t, err)
	assert.Assert(t, bytes.HasPrefix(png, []byte("\x89PNG")))

	first, err := wd.CurrentWindowHandle()
	assert.NilError(t, err)
	_, err = wd.ExecuteScript("window.open('about:blank', 'second')", nil)
	assert.NilError(t, err)
	handles, err := wd.WindowHandles()
	assert.NilError(t, err)
	assert.Equal(t, len(handles), 2)
	second := handles[0]
	if second == first {
		second = handles[1]
	}
	assert.NilError(t, wd.SwitchWindow(second))
	assert.NilError(t, wd.CloseWindow(second))
	assert.NilError(t, wd.SwitchWindow(first))

	// tebeka sends expiry 0 (1970) unless told otherwise.
	expiry := uint(time.Now().Add(time.Hour).Unix())
	assert.NilError(t, wd.AddCookie(&selenium.Cookie{Name: "c1", Value: "v1", Expiry: expiry}))
	cookie, err := wd.GetCookie("c1")
	assert.NilError(t, err)
	assert.Equal(t, cookie.Value, "v1")
	assert.NilError(t, wd.DeleteCookie("c1"))
	cookies, err := wd.GetCookies()
	assert.NilError(t, err)
	assert.Equal(t, len(cookies), 0)

	_, err = wd.AlertText()
	assertSeleniumError(t, err, wire.NoSuchAlert)
	alert, err := wd.FindElement(selenium.ByCSSSelector, "#alert")
	assert.NilError(t, err)
	assert.NilError(t, alert.Click())
	text := ""
	for i := 0; i < 100 && text == ""; i++ {
		if text, err = wd.AlertText(); err != nil {
			time.Sleep(20 * time.Millisecond)
		}
	}
	assert.Equal(t, text, "hello")
	assert.NilError(t, wd.AcceptAlert())

	// tebeka has no W3C actions API: send them raw through /wd/hub.
	c := newWire(t, env.URL+"/wd/hub", true)
	input, err := wd.FindElement(selenium.ByCSSSelector, "#input")
	assert.NilError(t, err)
	assert.NilError(t, input.Click())
	c.do("POST", "/session/"+wd.SessionID()+"/actions", map[string]any{"actions": []any{map[string]any{
		"type": "key", "id": "keyboard", "actions": []any{map[string]any{"type": "keyDown", "value": "z"}, map[string]any{"type": "keyUp", "value": "z"}},
	}}}).ok(t, nil)
	c.do("DELETE", "/session/"+wd.SessionID()+"/actions", nil).ok(t, nil)
	typed, err := wd.ExecuteScript("return arguments[0].value", []any{input})
	assert.NilError(t, err)
	assert.Equal(t, typed, "z")

	assert.NilError(t, wd.Quit())
	quit = true
	assert.Equal(t, env.Server.Sessions().Len(), 0)
}

// assertSeleniumError checks that err is tebeka's report of a W3C error
// with code.
func assertSeleniumError(t *testing.T, err error, code wire.ErrorCode) {
	t.Helper()
	assert.Assert(t, err != nil, "want %q, got no error", code)
	var se *selenium.Error
	assert.Assert(t, errors.As(err, &se), "want a *selenium.Error %q, got %T %v", code, err, err)
	assert.Equal(t, se.Err, string(code), "%v", err)
}
