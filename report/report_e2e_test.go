package report_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tebeka/selenium"
	"github.com/tebeka/selenium/log"
	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/engine/kind"
	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/report"
	"github.com/wdext/wdext/wire"
	"github.com/wdext/wdext/wpt"
)

// browser is a Chromium session through wdext that opens reports from
// file:// and checks them. WDEXT_REPORT_SHOTS=DIR saves a full-page
// screenshot of each.
type browser struct {
	t   *testing.T
	env *chromiumtest.Env
	wd  selenium.WebDriver
}

func newBrowser(t *testing.T) *browser {
	env := chromiumtest.Start(t)
	wd := e2e.Session(t, env.URL, logging())
	assert.NilError(t, wd.ResizeWindow("", 1400, 1000))
	return &browser{t: t, env: env, wd: wd}
}

// open loads the report at path and fails on any console message of
// level warning or worse (a script error, a blocked load: the report's
// Content-Security-Policy forbids the network), or if its script did not
// run to the end.
func (b *browser) open(path string) {
	t := b.t
	t.Helper()
	abs, err := filepath.Abs(path)
	assert.NilError(t, err)
	assert.NilError(t, b.wd.Get("file://"+abs))
	ready, err := b.wd.ExecuteScript(`return document.documentElement.dataset.ready || ""`, nil)
	assert.NilError(t, err)
	assert.Equal(t, ready, "1", "the report's script did not finish")
	msgs, err := b.wd.Log(log.Browser)
	assert.NilError(t, err)
	for _, m := range msgs {
		if m.Level != log.Info && m.Level != log.Debug && m.Level != log.All {
			t.Errorf("console %s: %s", m.Level, m.Message)
		}
	}
}

// hover moves the mouse over the middle of the element css selects
// (W3C actions).
func (b *browser) hover(css string) {
	b.t.Helper()
	r := b.script(`const r = document.querySelector(arguments[0]).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]`, css).([]any)
	var out any
	err := wire.Call(context.Background(), http.DefaultClient, "POST", b.env.URL+"/session/"+b.wd.SessionID()+"/actions",
		map[string]any{"actions": []any{map[string]any{"type": "pointer", "id": "mouse", "parameters": map[string]any{"pointerType": "mouse"},
			"actions": []any{map[string]any{"type": "pointerMove", "duration": 0, "origin": "viewport", "x": int(r[0].(float64)), "y": int(r[1].(float64))}}}}}, &out)
	assert.NilError(b.t, err)
}

func (b *browser) count(css string) int {
	b.t.Helper()
	els, err := b.wd.FindElements(selenium.ByCSSSelector, css)
	assert.NilError(b.t, err)
	return len(els)
}

func (b *browser) script(js string, args ...any) any {
	b.t.Helper()
	if args == nil {
		args = []any{}
	}
	v, err := b.wd.ExecuteScript(js, args)
	assert.NilError(b.t, err)
	return v
}

// shot saves a full-page screenshot when WDEXT_REPORT_SHOTS names a
// directory (CDP Page.captureScreenshot, through chromedriver): NAME.png,
// or NAME-1.png, NAME-2.png, … for each 1300 pixels of a taller page.
func (b *browser) shot(name string) {
	dir := os.Getenv("WDEXT_REPORT_SHOTS")
	if dir == "" {
		return
	}
	size := b.script(`return [document.documentElement.scrollWidth, document.documentElement.scrollHeight]`).([]any)
	w, h := size[0].(float64), size[1].(float64)
	const part = 1300.0
	for i, y := 0, 0.0; y < h; i, y = i+1, y+part {
		var v struct {
			Data string `json:"data"`
		}
		err := wire.Call(context.Background(), http.DefaultClient, "POST",
			b.env.URL+"/session/"+b.wd.SessionID()+"/goog/cdp/execute",
			map[string]any{"cmd": "Page.captureScreenshot", "params": map[string]any{"captureBeyondViewport": true,
				"clip": map[string]any{"x": 0, "y": y, "width": w, "height": min(part, h-y), "scale": 1}}}, &v)
		assert.NilError(b.t, err)
		png, err := base64.StdEncoding.DecodeString(v.Data)
		assert.NilError(b.t, err)
		file := name + ".png"
		if h > part {
			file = fmt.Sprintf("%s-%d.png", name, i+1)
		}
		assert.NilError(b.t, os.WriteFile(filepath.Join(dir, file), png, 0o644))
	}
}

func write(t *testing.T, p *report.Page) string {
	var buf bytes.Buffer
	assert.NilError(t, p.Write(&buf))
	path := filepath.Join(t.TempDir(), "report.html")
	assert.NilError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	if dir := os.Getenv("WDEXT_REPORT_SHOTS"); dir != "" {
		assert.NilError(t, os.WriteFile(filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "-")+".html"), buf.Bytes(), 0o644))
	}
	return path
}

func readFile(t *testing.T, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	assert.NilError(t, err)
	return b
}

func TestReportsInChromium(t *testing.T) {
	b := newBrowser(t)

	t.Run("trace", func(t *testing.T) {
		b.t = t
		tr, forced, err := report.ParseTrace(readFile(t, "trace.json"))
		assert.NilError(t, err)
		var p report.Page
		p.Title = "trace"
		p.AddTraces(report.TraceInput{Name: "trace.json", Trace: tr, Forced: append(forced, report.Window{Start: 139.5, End: 140.5}, report.Window{Start: 170, End: 170})})
		b.open(write(t, &p))
		// main is on the stack in two runs (the forced samples between
		// have no stack); every other frame in one.
		want := map[string]int{"0": 2, "1": 1, "2": 1, "3": 1, "4": 1, "5": 1}
		got := map[string]int{}
		for _, f := range b.script(`return [...document.querySelectorAll("svg.flame rect.fb")].map((r) => r.dataset.f)`).([]any) {
			got[f.(string)]++
		}
		assert.DeepEqual(t, got, want)
		assert.Equal(t, b.count("svg.flame .forced"), 2)
		// Hover names the frame and its script.
		b.hover(`rect.fb[data-f="2"]`)
		tip := b.script(`const t = document.getElementById("tip"); return t.hidden ? "" : t.textContent`).(string)
		assert.Assert(t, strings.Contains(tip, "layout") && strings.Contains(tip, "https://example.test/lib/layout.js:5:1"), tip)
		b.shot("trace")
	})

	t.Run("census", func(t *testing.T) {
		b.t = t
		cs, err := report.ParseCensus(readFile(t, "census-before.json"))
		assert.NilError(t, err)
		var p report.Page
		p.Title = "census"
		p.AddCensus("census-before.json", cs...)
		b.open(write(t, &p))
		names := b.script(`return [...document.querySelectorAll("svg.treemap rect")].map((r) => r.dataset.name)`).([]any)
		for _, want := range []string{"objects", "Foo", "Object", "Function", "Array", "strings", "scripts", "other", "array", "object shape"} {
			assert.Assert(t, contains(names, want), "no cell %q in %v", want, names)
		}
		text := b.script(`return document.querySelector("svg.treemap").textContent`).(string)
		assert.Assert(t, strings.Contains(text, "Object"), text)
		b.shot("census")
	})

	t.Run("census-diff", func(t *testing.T) {
		b.t = t
		before, err := report.ParseCensus(readFile(t, "census-before.json"))
		assert.NilError(t, err)
		after, err := report.ParseCensus(readFile(t, "census-after.json"))
		assert.NilError(t, err)
		var p report.Page
		p.Title = "census diff"
		p.AddCensusDiff("before → after", before[0].Root, after[0].Root)
		b.open(write(t, &p))
		names := b.script(`return [...document.querySelectorAll("svg.treemap rect.leaf")].map((r) => r.dataset.name).sort()`).([]any)
		assert.DeepEqual(t, names, []any{"Foo", "HTMLDivElement", "Leaky", "array", "strings"})
		first := b.script(`return document.querySelector(".rows tr:nth-child(2) td").textContent`).(string)
		assert.Equal(t, first, "objects › Leaky")
		b.shot("census-diff")
	})

	t.Run("leaks", func(t *testing.T) {
		b.t = t
		rs, err := report.ParseLeaks(readFile(t, "leaks.json"))
		assert.NilError(t, err)
		var p report.Page
		p.Title = "leaks"
		p.AddLeaks("leaks.json", rs...)
		b.open(write(t, &p))
		assert.Equal(t, b.count("div.leak"), 4)
		chain := b.script(`return [...document.querySelectorAll('.leak[data-name="Foo"] .chain li')].map((li) => li.textContent)`).([]any)
		assert.DeepEqual(t, chain, []any{"Window", "store (property)", "Array", "[29] (element)", "Foo"})
		created := b.script(`return document.querySelector('.leak[data-name="Foo"] .created').textContent`).(string)
		assert.Assert(t, strings.Contains(created, "makeFoos") && strings.Contains(created, "leaks.js:19:18"), created)
		b.shot("leaks")
	})
}

func contains(list []any, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// A wdext wpt run with capture on: the profiled test's trace comes back
// with its three forced samples marked, the memory test's measurement and
// its own attachment too, and the report shows them with the results.
func TestWPTReport(t *testing.T) {
	env := chromiumtest.Start(t, forcesample.Register)
	root := filepath.Join("testdata", "wpt")
	srv, th := e2e.WPTServer(t, root)
	// Chromium's WPT capabilities: ForceEagerMeasureMemory, without which
	// the memory test's measurement waits for a GC 10–20 s away and times
	// out (the runner no longer defaults to them).
	r := &wpt.Runner{WebDriver: env.URL, Server: srv, Testharness: th, Capture: true,
		Capabilities: chromium.WPTCapabilities(kind.Served{}),
		Log:          slog.New(slog.NewTextHandler(io.Discard, nil))}
	r.Mount()
	t.Cleanup(r.Close)
	tests, err := wpt.Discover(root, nil)
	assert.NilError(t, err)
	run := wpt.Run{Info: map[string]any{"product": "chrome"}, Start: time.Now()}
	run.Results, err = r.Run(context.Background(), tests)
	assert.NilError(t, err)
	run.End = time.Now()

	byTest := map[string]wpt.Result{}
	for _, res := range run.Results {
		byTest[res.Test] = res
	}
	prof, mem := byTest["/profile.html"], byTest["/memory.html"]
	assert.Equal(t, prof.Status, wpt.StatusOK, prof.Message)
	assert.Equal(t, len(prof.Forced), 3)
	assert.Equal(t, len(prof.Attachments), 2)
	assert.Equal(t, prof.Attachments[0].Kind, wpt.AttachTrace)
	assert.Equal(t, prof.Attachments[1].Kind, wpt.AttachTrace)
	assert.Equal(t, mem.Status, wpt.StatusOK, mem.Message)
	kinds := []string{}
	for _, a := range mem.Attachments {
		kinds = append(kinds, a.Kind)
	}
	assert.DeepEqual(t, kinds, []string{wpt.AttachMeasurement, "note"})

	var p report.Page
	p.Title = "wdext wpt: report/testdata/wpt"
	p.AddWPT(run, nil)
	b := &browser{t: t, env: env, wd: e2e.Session(t, env.URL, logging())}
	assert.NilError(t, b.wd.ResizeWindow("", 1400, 1000))
	b.open(write(t, &p))
	assert.Equal(t, b.count("details.test"), 2)
	assert.Equal(t, b.count(`details.test[data-test="/profile.html"] svg.flame`), 2)
	traces := `details.test[data-test="/profile.html"] [data-frames]`
	names := b.script(`const s = document.querySelectorAll(arguments[0])[0];
		const frames = JSON.parse(s.dataset.frames);
		return [...s.querySelectorAll("rect.fb")].map((r) => frames[r.dataset.f][0])`, traces).([]any)
	for _, want := range []string{"render", "layout", "fib", "spin"} {
		assert.Assert(t, contains(names, want), "no box for %s in %v", want, names)
	}
	// The second trace has the three forced samples in the spans of
	// their force_sample() calls (Chromium's forced samples have no page
	// frames: red marks in the lane, no boxes), each alone in its span
	// (.forced; a span shared with a sample V8 took by itself would mark
	// both .maybe): the page keeps V8's construction, stop and periodic
	// samples out of the spans.
	marks := b.script(`const s = document.querySelectorAll(arguments[0])[1]; return [s.querySelectorAll(".forced").length, s.querySelectorAll(".maybe").length]`, traces).([]any)
	assert.DeepEqual(t, marks, []any{3.0, 0.0})
	assert.Equal(t, b.count(`details.test[data-test="/profile.html"] > summary .tag`), 2) // unexpected subtests, attachments
	assert.Equal(t, b.count(`details.test[data-test="/memory.html"] .measurement`), 1)
	assert.Equal(t, b.count(`details.test[data-test="/memory.html"] .raw-attachment`), 1)
	b.shot("wpt")
}

func logging() selenium.Capabilities {
	caps := chromiumtest.Capabilities()
	caps["goog:loggingPrefs"] = map[string]string{"browser": "ALL"}
	return caps
}

// WDEXT_REPORT_FILES=a.html,b.html (with WDEXT_REPORT_SHOTS=DIR) opens
// reports made elsewhere (wdext report, wdext wpt --html), checks them
// as above, and saves their screenshots: how the README's examples and
// the measured reports were looked at.
func TestReportFiles(t *testing.T) {
	files := os.Getenv("WDEXT_REPORT_FILES")
	if files == "" {
		t.Skip("WDEXT_REPORT_FILES names no reports")
	}
	b := newBrowser(t)
	for _, f := range strings.Split(files, ",") {
		b.open(f)
		b.shot(strings.TrimSuffix(filepath.Base(f), ".html"))
	}
}
