package firefox_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/tebeka/selenium"
	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/firefox/firefoxtest"
	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/memory"
	"github.com/wdext/wdext/memory/debuggermemory"
	"github.com/wdext/wdext/memory/leakcheck"
	"github.com/wdext/wdext/wire"
)

// start runs wdext in front of managed Firefox, with the memory commands,
// until the test ends; processes the test starts carry its marker.
func start(t *testing.T) (url, mark string) {
	t.Helper()
	m := fmt.Sprintf("%s-%d", t.Name(), os.Getpid())
	t.Setenv("WDEXT_TEST_MARK", m)
	env := firefoxtest.Start(t, memory.Register, debuggermemory.Register, leakcheck.Register, forcesample.Register)
	return env.URL, "WDEXT_TEST_MARK=" + m
}

// formSession opens testdata/firefox/form.html in a new Selenium session
// at url, quit when the test ends, and returns it, the pages' origins and
// the session's URL.
func formSession(t *testing.T, url string) (selenium.WebDriver, *e2e.Pages, string) {
	t.Helper()
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	wd, err := selenium.NewRemote(selenium.Capabilities{"browserName": "firefox"}, url)
	assert.NilError(t, err)
	t.Cleanup(func() { wd.Quit() })
	assert.NilError(t, wd.Get(pages.A+"/firefox/form.html"))
	return wd, pages, url + "/session/" + wd.SessionID()
}

// A Selenium client's element commands work through the Marionette
// translation, and Firefox's errors arrive as W3C errors.
func TestSeleniumElementCommands(t *testing.T) {
	url, mark := start(t)
	wd, _, s := formSession(t, url)
	title, err := wd.Title()
	assert.NilError(t, err)
	assert.Equal(t, title, "form")

	add, err := wd.FindElement(selenium.ByID, "add")
	assert.NilError(t, err)
	for range 2 {
		assert.NilError(t, add.Click())
	}
	out, err := wd.FindElement(selenium.ByCSSSelector, "#out")
	assert.NilError(t, err)
	text, err := out.Text()
	assert.NilError(t, err)
	assert.Equal(t, text, "clicked 2")

	name, err := wd.FindElement(selenium.ByID, "name")
	assert.NilError(t, err)
	assert.NilError(t, name.SendKeys("wdext"))
	v, err := wd.ExecuteScript("return arguments[0].value", []any{name})
	assert.NilError(t, err)
	assert.Equal(t, v, "wdext")

	list, err := wd.FindElement(selenium.ByTagName, "ul")
	assert.NilError(t, err)
	items, err := list.FindElements(selenium.ByCSSSelector, "li.item")
	assert.NilError(t, err)
	assert.Equal(t, len(items), 3)
	loc, err := items[2].Location()
	assert.NilError(t, err)
	assert.Assert(t, loc.Y > 0)

	got, err := wd.ExecuteScript("return arguments[0].textContent + document.title", []any{items[1]})
	assert.NilError(t, err)
	assert.Equal(t, got, "twoform")
	ck, err := wd.GetCookie("flavour")
	assert.NilError(t, err)
	assert.Equal(t, ck.Value, "oat")
	png, err := wd.Screenshot()
	assert.NilError(t, err)
	assert.Assert(t, len(png) > 1000)

	_, err = wd.FindElement(selenium.ByID, "missing")
	assert.ErrorContains(t, err, "no such element")

	// Raw: the W3C status and envelope of Firefox's errors.
	status, body := post(t, s+"/element", `{"using":"css selector","value":"#missing"}`)
	assert.Equal(t, status, 404, body)
	assert.Assert(t, strings.Contains(body, `"error":"no such element"`), body)
	status, body = get(t, s+"/cookie/nope")
	assert.Equal(t, status, 404, body)
	assert.Assert(t, strings.Contains(body, `"error":"no such cookie"`), body)
	status, body = post(t, s+"/url", `{"url": 5}`)
	assert.Equal(t, status, 400, body)
	assert.Assert(t, strings.Contains(body, `"error":"invalid argument"`), body)

	assert.NilError(t, wd.Quit())
	e2e.WaitGone(t, mark)
}

// forcesample reaches the Profiler polyfill that every document runs
// first (a BiDi preload script): three forces, three samples beside the
// one at construction.
func TestForceSample(t *testing.T) {
	url, _ := start(t)
	wd, _, s := formSession(t, url)
	const startProfiler = "window.profiler = new Profiler({sampleInterval: 10000, maxBufferSize: 100}); return typeof Profiler"
	got, err := wd.ExecuteScript(startProfiler, nil)
	assert.NilError(t, err)
	assert.Equal(t, got, "function")
	for range 3 {
		status, body := post(t, s+"/forcesample", `{}`)
		assert.Equal(t, status, 200, body)
	}
	n, err := wd.ExecuteScriptAsync("profiler.stop().then(trace => arguments[0](trace.samples.length))", nil)
	assert.NilError(t, err)
	assert.Equal(t, n, 4.0, "one at construction, three forced")
}

// Every dedicated worker has a Profiler from its first line (wdext puts
// the polyfill in through the worker's WorkerDebugger, while Firefox holds
// the worker), and forcesample reaches it. A blob:, data: or nested blob:
// worker has its creator's Document-Policy; one from the network has its
// own response's (allowed here).
func TestProfilerInWorkers(t *testing.T) {
	url, _ := start(t)
	wd, pages, s := formSession(t, url)
	ask := func(msg string) string {
		t.Helper()
		v, err := wd.ExecuteScriptAsync("ask(arguments[0]).then(arguments[1])", []any{msg})
		assert.NilError(t, err)
		b, err := json.Marshal(v)
		assert.NilError(t, err)
		return string(b)
	}
	for _, c := range []struct{ query, want string }{
		{"", `["function","true"]`},
		{"?blob", `["function","true"]`},
		{"?data", `["function","true"]`},
		{"?nested", `["function","true"]`},
		{"?deny", `["function","true"]`},
		{"?blob&deny", `["NotAllowedError"]`},
		{"?data&deny", `["NotAllowedError"]`},
		{"?nested&deny", `["NotAllowedError"]`},
	} {
		assert.NilError(t, wd.Get(pages.A+"/webkitgtk/worker.html"+c.query))
		assert.Equal(t, ask("start"), c.want, c.query)
	}
	for _, query := range []string{"", "?nested"} {
		assert.NilError(t, wd.Get(pages.A+"/webkitgtk/worker.html"+query))
		assert.Equal(t, ask("start"), `["function","true"]`)
		for range 2 {
			status, body := post(t, s+"/forcesample", `{}`)
			assert.Equal(t, status, 200, body)
		}
		assert.Equal(t, ask("stop"), "3", "%s: one at construction, two forced", query)
	}
}

// webSocketUrl: true gives the client Firefox's BiDi session through
// wdext's proxy, beside wdext's own use of it.
func TestBiDi(t *testing.T) {
	url, _ := start(t)
	status, body := post(t, url+"/session", `{"capabilities": {"alwaysMatch": {"webSocketUrl": true}}}`)
	assert.Equal(t, status, 200, body)
	var ns struct {
		Value struct {
			Capabilities struct {
				WebSocketURL string `json:"webSocketUrl"`
			} `json:"capabilities"`
		} `json:"value"`
	}
	assert.NilError(t, json.Unmarshal([]byte(body), &ns))
	ws := ns.Value.Capabilities.WebSocketURL
	assert.Assert(t, strings.HasPrefix(ws, "ws://"+strings.TrimPrefix(url, "http://")+"/"), "%q is not wdext's", ws)
	c, _, err := websocket.DefaultDialer.Dial(ws, nil)
	assert.NilError(t, err)
	defer c.Close()
	assert.NilError(t, c.WriteJSON(map[string]any{"id": 1, "method": "browsingContext.getTree", "params": map[string]any{}}))
	var r struct {
		ID     int    `json:"id"`
		Type   string `json:"type"`
		Result struct {
			Contexts []map[string]any `json:"contexts"`
		} `json:"result"`
	}
	assert.NilError(t, c.ReadJSON(&r))
	assert.Equal(t, r.Type, "success")
	assert.Equal(t, len(r.Result.Contexts), 1)
}

// New Session processes capabilities as a remote end does: bad ones are
// "invalid argument", unmatched ones "session not created", and no
// browser is left behind either way.
func TestNewSessionErrors(t *testing.T) {
	url, mark := start(t)
	for body, want := range map[string]string{
		`{"capabilities": {"alwaysMatch": {"browserName": 5}}}`:                            "invalid argument",
		`{"capabilities": {"alwaysMatch": {"nonsense": true}}}`:                            "invalid argument",
		`{"capabilities": {"firstMatch": []}}`:                                             "invalid argument",
		`{"capabilities": {"alwaysMatch": {"browserName": "chrome"}}}`:                     "session not created",
		`{"capabilities": {"alwaysMatch": {"moz:firefoxOptions": {"args": [1]}}}}`:         "invalid argument",
		`{"capabilities": {"alwaysMatch": {"moz:firefoxOptions": {"profile": "UEsFBg"}}}}`: "session not created",
		`{"capabilities": {"alwaysMatch": {"pageLoadStrategy": "soon"}}}`:                  "invalid argument",
	} {
		status, reply := post(t, url+"/session", body)
		var e wire.ErrorEnvelope
		assert.NilError(t, json.Unmarshal([]byte(reply), &e), reply)
		assert.Equal(t, e.Value.Error, want, "%s → %s", body, reply)
		assert.Equal(t, status, wire.ErrorCode(want).Status(), body)
	}
	// firstMatch picks the entry Firefox matches; moz:firefoxOptions prefs
	// reach the profile.
	status, reply := post(t, url+"/session", `{"capabilities": {"firstMatch": [{"browserName": "chrome"}, {"browserName": "firefox", "moz:firefoxOptions": {"prefs": {"wdext.test.pref": "set"}}}]}}`)
	assert.Equal(t, status, 200, reply)
	var ns struct {
		Value struct {
			SessionID    string         `json:"sessionId"`
			Capabilities map[string]any `json:"capabilities"`
		} `json:"value"`
	}
	assert.NilError(t, json.Unmarshal([]byte(reply), &ns))
	assert.Equal(t, ns.Value.Capabilities["browserName"], "firefox")
	profile, _ := ns.Value.Capabilities["moz:profile"].(string)
	userJS, err := os.ReadFile(profile + "/user.js")
	assert.NilError(t, err)
	assert.Assert(t, strings.Contains(string(userJS), `user_pref("wdext.test.pref", "set");`), "%s", userJS)
	status, reply = del(t, url+"/session/"+ns.Value.SessionID)
	assert.Equal(t, status, 200, reply)
	e2e.WaitGone(t, mark)
}

// The memory commands on Firefox: gc and measure from the memory
// reporters, SpiderMonkey's own allocation log, GC log and census, and
// "unsupported operation" saying why for the leak check.
func TestMemoryCommands(t *testing.T) {
	url, _ := start(t)
	wd, pages, s := formSession(t, url)

	status, body := post(t, s+"/wdext/memory/gc", `{}`)
	assert.Equal(t, status, 200, body)
	var gc struct {
		Value wire.GCResult `json:"value"`
	}
	assert.NilError(t, json.Unmarshal([]byte(body), &gc))
	assert.Equal(t, len(gc.Value.Targets), 1, body)
	assert.Equal(t, gc.Value.Targets[0].Type, "page")
	assert.Equal(t, gc.Value.Targets[0].URL, pages.A+"/firefox/form.html")
	assert.Assert(t, gc.Value.Targets[0].UsedAfter > 0, body)

	// measure is the memory reporters' count of the tab, in the spec's
	// shape; source "api" does not exist on Firefox.
	status, body = post(t, s+"/wdext/memory/measure", `{}`)
	assert.Equal(t, status, 200, body)
	var m struct {
		Value wire.MemoryMeasurement `json:"value"`
	}
	assert.NilError(t, json.Unmarshal([]byte(body), &m))
	assert.Assert(t, m.Value.Bytes > 0, body)
	var attributed []string
	for _, e := range m.Value.Breakdown {
		for _, a := range e.Attribution {
			attributed = append(attributed, a.URL)
		}
	}
	assert.DeepEqual(t, attributed, []string{pages.A + "/firefox/form.html"})
	status, body = post(t, s+"/wdext/memory/measure", `{"source": "api"}`)
	assert.Equal(t, status, 500, body)
	assert.Assert(t, strings.Contains(body, `"error":"unsupported operation"`), body)

	// The allocation log is SpiderMonkey's own: a Selenium click that
	// makes 1000 objects logs them, at their function, at probability 1.
	status, body = post(t, s+"/wdext/memory/allocations", `{"trackingAllocationSites": true, "allocationSamplingProbability": 1}`)
	assert.Equal(t, status, 200, body)
	assert.NilError(t, wd.Get(pages.A+"/firefox/alloc.html"))
	make, err := wd.FindElement(selenium.ByID, "make")
	assert.NilError(t, err)
	assert.NilError(t, make.Click())
	// What the client's own script makes is logged too (Marionette runs
	// it in a sandbox of the page's).
	_, err = wd.ExecuteScript("function viaScript() { const a = []; for (let i = 0; i < 300; i++) a.push({i}); return a; } window.alsoKept = viaScript();", nil)
	assert.NilError(t, err)
	status, body = post(t, s+"/wdext/memory/allocations/drain", `{}`)
	assert.Equal(t, status, 200, body)
	var log struct {
		Value wire.AllocationsLog `json:"value"`
	}
	assert.NilError(t, json.Unmarshal([]byte(body), &log))
	inMake, inScript := 0, 0
	for _, e := range log.Value.Log {
		switch {
		case e.Frame == nil:
		case e.Frame.FunctionDisplayName == "make" && strings.HasSuffix(e.Frame.Source, "/firefox/alloc.html"):
			inMake++
		case e.Frame.FunctionDisplayName == "viaScript":
			inScript++
		}
	}
	assert.Assert(t, inMake >= 1000, "%d of %d entries in make()", inMake, len(log.Value.Log))
	assert.Assert(t, inScript >= 300, "%d of %d entries in the client's script", inScript, len(log.Value.Log))
	status, body = post(t, s+"/wdext/memory/allocations", `{"trackingAllocationSites": false}`)
	assert.Equal(t, status, 200, body)

	// The GC log is onGarbageCollection's.
	status, body = post(t, s+"/wdext/memory/gc-log", `{"collect": true}`)
	assert.Equal(t, status, 200, body)
	status, body = post(t, s+"/wdext/memory/gc", `{}`)
	assert.Equal(t, status, 200, body)
	status, body = get(t, s+"/wdext/memory/gc-log")
	assert.Equal(t, status, 200, body)
	var gcs struct {
		Value wire.GCLog `json:"value"`
	}
	assert.NilError(t, json.Unmarshal([]byte(body), &gcs))
	assert.Assert(t, len(gcs.Value.Entries) >= 1, body)
	assert.Equal(t, *gcs.Value.Entries[0].Reason, "COMPONENT_UTILS", body)
	assert.Assert(t, len(gcs.Value.Entries[0].Collections) >= 1, body)

	// The census is SpiderMonkey's takeCensus, with the client's
	// breakdown: class instances are "Object" (objectClass is the
	// internal class), and allocationStack groups by the stacks that
	// tracking recorded.
	census := func(breakdown string) json.RawMessage {
		status, body := post(t, s+"/wdext/memory/census", `{"breakdown": `+breakdown+`}`)
		assert.Equal(t, status, 200, body)
		var c struct {
			Value json.RawMessage `json:"value"`
		}
		assert.NilError(t, json.Unmarshal([]byte(body), &c))
		return c.Value
	}
	var byClass map[string]struct{ Count int }
	assert.NilError(t, json.Unmarshal(census(`{"by": "objectClass", "then": {"by": "count"}}`), &byClass))
	assert.Assert(t, byClass["Object"].Count >= 1000, "%v", byClass)
	var byStack []struct {
		Stack  []wire.Frame
		Census struct{ Count int }
	}
	assert.NilError(t, json.Unmarshal(census(`{"by": "allocationStack", "then": {"by": "count"}}`), &byStack))
	atMake := 0
	for _, e := range byStack {
		if len(e.Stack) > 0 && e.Stack[0].FunctionDisplayName == "make" {
			atMake += e.Census.Count
		}
	}
	assert.Assert(t, atMake >= 1000, "%d allocated at make(): %+v", atMake, byStack)

	status, body = post(t, s+"/wdext/memory/leaks/start", `{}`)
	assert.Equal(t, status, 500, body)
	assert.Assert(t, strings.Contains(body, `"error":"unsupported operation"`), body)
	assert.Assert(t, strings.Contains(body, "saveHeapSnapshot"), body)
}

func post(t *testing.T, url, body string) (int, string) { return call(t, "POST", url, body) }
func get(t *testing.T, url string) (int, string)        { return call(t, "GET", url, "") }
func del(t *testing.T, url string) (int, string)        { return call(t, "DELETE", url, "") }

func call(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	assert.NilError(t, err)
	resp, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	return resp.StatusCode, string(b)
}

// Real clients drive the classic commands, and BiDi, through wdext on
// Firefox: Python Selenium 4.8, selenium-webdriver, and WebdriverIO
// classic and BiDi (testdata/classic's scripts, which pass against
// wdext serve --engine chromium as well, with "chrome").
func TestClassicClients(t *testing.T) {
	url, _ := start(t)
	e2e.RequireTool(t, "/usr/bin/python3 with selenium", "/usr/bin/python3", "-c", "import selenium")
	nm := e2e.RequireNodeClients(t)
	page := e2e.ServePages(t, e2e.Testdata("classic"), nil).A + "/page.html"
	e2e.RunScript(t, nil, "/usr/bin/python3", "testdata/classic/classic.py", url, "firefox", page)
	e2e.RunScript(t, []string{"WDEXT_NODE_MODULES=" + nm}, "node", "testdata/classic/classic.mjs", url, "firefox", page)
}

// The Profiler polyfill gets periodic samples from the Gecko profiler
// (10 ms apart): a Selenium click that keeps the page busy in spin() for
// 500 ms gives each of two profilers of a 10 ms sampleInterval, stopped
// at once, up to 50 samples there (fewer on a loaded machine: 12 to 18
// of 30 in 300 ms at load 12), with the page's frames only, named and
// placed as the script has them, and the builtin it calls by its name.
func TestProfilerPeriodicSamples(t *testing.T) {
	url, _ := start(t)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	wd := e2e.Session(t, url, selenium.Capabilities{"browserName": "firefox"})
	assert.NilError(t, wd.Get(pages.A+"/firefox/spin.html"))
	for _, id := range []string{"start", "spin", "stop"} {
		b, err := wd.FindElement(selenium.ByID, id)
		assert.NilError(t, err)
		assert.NilError(t, b.Click())
	}
	type trace struct {
		Frames []struct {
			Name         string
			ResourceID   *int
			Line, Column int
		}
		Resources []string
		Stacks    []struct {
			FrameID  int
			ParentID *int
		}
		Samples []struct {
			Timestamp float64
			StackID   *int
		}
	}
	var traces []trace
	for i := 0; i < 100; i++ {
		v, err := wd.ExecuteScript("return window.traces && JSON.stringify(window.traces)", nil)
		assert.NilError(t, err)
		if s, ok := v.(string); ok {
			assert.NilError(t, json.Unmarshal([]byte(s), &traces))
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	assert.Equal(t, len(traces), 2, "the two profilers' traces")
	for _, tr := range traces {
		builtin := false
		for _, f := range tr.Frames {
			builtin = builtin || f.Name == "createElement" && f.ResourceID == nil
		}
		assert.Assert(t, builtin, "document.createElement() as a frame \"createElement\": %+v", tr.Frames)
		inSpin := 0
		for _, s := range tr.Samples {
			for id := s.StackID; id != nil; id = tr.Stacks[*id].ParentID {
				f := tr.Frames[tr.Stacks[*id].FrameID]
				assert.Assert(t, f.ResourceID == nil || tr.Resources[*f.ResourceID] == pages.A+"/firefox/spin.html", "%+v", f)
				if f.Name == "spin" {
					assert.Equal(t, f.Line, 17)
					inSpin++
					break
				}
			}
		}
		t.Logf("%d samples, %d in spin()", len(tr.Samples), inSpin)
		assert.Assert(t, inSpin >= 10 && inSpin <= 51, "%d samples in spin() of %d", inSpin, len(tr.Samples))
	}
}

// A content process that shuts down hands what it logged to the hub
// first: the allocations and the collection of a site's process, ended
// by a navigation to another site, are in the next drain and GC log.
func TestDebuggerLogOfEndedProcess(t *testing.T) {
	url, mark := start(t)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	// Firefox keeps no process of a site no tab shows.
	wd := e2e.Session(t, url, selenium.Capabilities{"browserName": "firefox", "moz:firefoxOptions": map[string]any{
		"prefs": map[string]any{"dom.ipc.keepProcessesAlive.webIsolated.perOrigin": 0},
	}})
	s := url + "/session/" + wd.SessionID()
	assert.NilError(t, wd.Get(pages.A+"/firefox/alloc.html"))
	status, body := post(t, s+"/wdext/memory/allocations", `{"trackingAllocationSites": true, "allocationSamplingProbability": 1, "maxAllocationsLogLength": 100000}`)
	assert.Equal(t, status, 200, body)
	status, body = post(t, s+"/wdext/memory/gc-log", `{"collect": true}`)
	assert.Equal(t, status, 200, body)
	button, err := wd.FindElement(selenium.ByID, "make")
	assert.NilError(t, err)
	assert.NilError(t, button.Click())
	status, body = post(t, s+"/wdext/memory/gc", `{}`)
	assert.Equal(t, status, 200, body)
	siteProcesses := func() []int {
		var pids []int
		for pid, comm := range e2e.MarkedProcesses(mark) {
			if comm == "Isolated Web Co" {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	first := siteProcesses()
	assert.Equal(t, len(first), 1, "the first site's process: %v", e2e.MarkedProcesses(mark))

	assert.NilError(t, wd.Get(pages.B+"/firefox/alloc.html"))
	for i := 0; i < 200 && slices.Contains(siteProcesses(), first[0]); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	assert.Assert(t, !slices.Contains(siteProcesses(), first[0]), "the first site's process %d outlived the navigation", first[0])

	status, body = post(t, s+"/wdext/memory/allocations/drain", `{}`)
	assert.Equal(t, status, 200, body)
	var log struct {
		Value wire.AllocationsLog `json:"value"`
	}
	assert.NilError(t, json.Unmarshal([]byte(body), &log))
	inMake := 0
	for _, e := range log.Value.Log {
		if e.Frame != nil && e.Frame.FunctionDisplayName == "make" && strings.HasPrefix(e.Frame.Source, pages.A+"/") {
			inMake++
		}
	}
	assert.Assert(t, inMake >= 1000 && inMake < 2000, "%d entries in make() at %s", inMake, pages.A)
	status, body = get(t, s+"/wdext/memory/gc-log")
	assert.Equal(t, status, 200, body)
	var gcs struct {
		Value wire.GCLog `json:"value"`
	}
	assert.NilError(t, json.Unmarshal([]byte(body), &gcs))
	ours := false
	for _, g := range gcs.Value.Entries {
		ours = ours || g.Pid == int64(first[0]) && g.Reason != nil && *g.Reason == "COMPONENT_UTILS"
	}
	assert.Assert(t, ours, "no collection of wdext's in process %d: %s", first[0], body)
}

// wdext's Debugger is in every content process, from its start: the
// allocation log and the GC log go on across a cross-site navigation (a
// new process), reach a frame of a third site (a third process), and keep
// what the first process logged; the census of all targets counts each
// process's heap. Every allocation comes from a Selenium click, and the
// client's script timeout of 0 bounds none of it.
func TestDebuggerAcrossProcesses(t *testing.T) {
	url, _ := start(t)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	wd := e2e.Session(t, url, selenium.Capabilities{"browserName": "firefox"})
	s := url + "/session/" + wd.SessionID()
	click := func() {
		t.Helper()
		make, err := wd.FindElement(selenium.ByID, "make")
		assert.NilError(t, err)
		assert.NilError(t, make.Click())
	}

	assert.NilError(t, wd.Get(pages.A+"/firefox/alloc.html"))
	// The client's script timeout does not bound wdext's scripts.
	assert.NilError(t, wd.SetAsyncScriptTimeout(0))
	status, body := post(t, s+"/wdext/memory/allocations", `{"trackingAllocationSites": true, "allocationSamplingProbability": 1, "maxAllocationsLogLength": 100000}`)
	assert.Equal(t, status, 200, body)
	status, body = post(t, s+"/wdext/memory/gc-log", `{"collect": true}`)
	assert.Equal(t, status, 200, body)
	click()
	status, body = post(t, s+"/wdext/memory/gc", `{}`)
	assert.Equal(t, status, 200, body)

	// Another site, embedding a third: three processes in all.
	assert.NilError(t, wd.Get(pages.B+"/firefox/alloc.html?frame="+pages.C+"/firefox/alloc.html"))
	click()
	frame, err := wd.FindElement(selenium.ByTagName, "iframe")
	assert.NilError(t, err)
	assert.NilError(t, wd.SwitchFrame(frame))
	click()
	assert.NilError(t, wd.SwitchFrame(nil))
	// gc and measure count the page's process and the frame's.
	status, body = post(t, s+"/wdext/memory/gc", `{}`)
	assert.Equal(t, status, 200, body)
	var gc struct {
		Value wire.GCResult `json:"value"`
	}
	assert.NilError(t, json.Unmarshal([]byte(body), &gc))
	var collected []string
	for _, g := range gc.Value.Targets {
		assert.Assert(t, g.UsedAfter > 0, body)
		collected = append(collected, g.Type+" "+g.URL)
	}
	top := pages.B + "/firefox/alloc.html?frame=" + pages.C + "/firefox/alloc.html"
	assert.DeepEqual(t, collected, []string{"page " + top, "iframe " + pages.C + "/firefox/alloc.html"})
	status, body = post(t, s+"/wdext/memory/measure", `{}`)
	assert.Equal(t, status, 200, body)
	var m struct {
		Value wire.MemoryMeasurement `json:"value"`
	}
	assert.NilError(t, json.Unmarshal([]byte(body), &m))
	var measured []string
	for _, e := range m.Value.Breakdown {
		for _, a := range e.Attribution {
			if e.Bytes > 0 && a.Container != nil {
				measured = append(measured, a.Scope+" "+a.Container.Src)
			} else if e.Bytes > 0 {
				measured = append(measured, a.Scope+" "+a.URL)
			}
		}
	}
	slices.Sort(measured)
	assert.DeepEqual(t, measured, []string{"Window " + top, "cross-origin-aggregated " + pages.C + "/firefox/alloc.html"})

	status, body = post(t, s+"/wdext/memory/allocations/drain", `{}`)
	assert.Equal(t, status, 200, body)
	var log struct {
		Value wire.AllocationsLog `json:"value"`
	}
	assert.NilError(t, json.Unmarshal([]byte(body), &log))
	assert.Assert(t, !log.Value.Overflowed)
	inMake, inLoad := map[string]int{}, map[string]int{}
	last := 0.0
	for _, e := range log.Value.Log {
		assert.Assert(t, *e.Timestamp >= last, "the log is oldest first")
		last = *e.Timestamp
		if e.Frame == nil {
			continue
		}
		// Marionette's own allocations (its clicks') are the driver's.
		assert.Assert(t, !strings.HasPrefix(e.Frame.Source, "chrome:"), "%+v", e.Stack)
		site := strings.TrimSuffix(strings.SplitN(e.Frame.Source, "/firefox/", 2)[0], "/")
		switch e.Frame.FunctionDisplayName {
		case "make":
			inMake[site]++
		case "load":
			inLoad[site]++
		}
	}
	for _, site := range []string{pages.A, pages.B, pages.C} {
		// 1000 objects and their array, each once.
		assert.Assert(t, inMake[site] >= 1000 && inMake[site] < 2000, "%d entries in make() at %s: %v", inMake[site], site, inMake)
	}
	// The new processes tracked from their first allocation: each page's
	// load, its frame's too.
	for _, site := range []string{pages.B, pages.C} {
		assert.Assert(t, inLoad[site] >= 500 && inLoad[site] < 1000, "%d entries in load() at %s: %v", inLoad[site], site, inLoad)
	}

	status, body = get(t, s+"/wdext/memory/gc-log")
	assert.Equal(t, status, 200, body)
	var gcs struct {
		Value wire.GCLog `json:"value"`
	}
	assert.NilError(t, json.Unmarshal([]byte(body), &gcs))
	pids := map[int64]bool{}
	for _, g := range gcs.Value.Entries {
		if g.Reason != nil && *g.Reason == "COMPONENT_UTILS" {
			pids[g.Pid] = true
		}
	}
	// The first gc collected in the first site's process, the second in
	// the second site's and the third's alone (the page's tab): the
	// first's entry outlived the navigation.
	assert.Assert(t, len(pids) >= 3, "wdext's collections in three processes: %s", body)

	status, body = post(t, s+"/wdext/memory/census", `{"targets": "all", "breakdown": {"by": "allocationStack", "then": {"by": "count"}}}`)
	assert.Equal(t, status, 200, body)
	var all struct {
		Value struct {
			Targets []struct {
				Type, URL string
				Census    []struct {
					Stack  []wire.Frame
					Census struct{ Count int }
				}
			}
		}
	}
	assert.NilError(t, json.Unmarshal([]byte(body), &all))
	made := map[string]int{}
	for _, tc := range all.Value.Targets {
		for _, e := range tc.Census {
			if len(e.Stack) > 0 && e.Stack[0].FunctionDisplayName == "make" {
				made[tc.Type+" "+tc.URL] += e.Census.Count
			}
		}
	}
	assert.Assert(t, made["page "+top] >= 1000, "%v", made)
	assert.Assert(t, made["iframe "+pages.C+"/firefox/alloc.html"] >= 1000, "%v", made)
}
