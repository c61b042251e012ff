package main

import (
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/tebeka/selenium"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/engine/kind"
	"github.com/wdext/wdext/engine/registry"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/wire"
	"github.com/wdext/wdext/wpt"
)

// fakeKind is a third engine, registered by this test alone: its driver is
// a real chromedriver, but its engine, its flag, its command, its WPT
// product and its document rewriting are its own. Nothing outside this
// file knows it, which is the proof that an engine is one folder plus one
// registration.
func fakeKind(binds *atomic.Int32) kind.Kind {
	return kind.Kind{
		Name:   "fake",
		Starts: "a fake engine over chromedriver",
		Flags: func(fs *flag.FlagSet) kind.Launcher {
			l := &fakeLauncher{binds: binds}
			fs.StringVar(&l.greeting, "fake-greeting", "hello", "what the fake engine's command says")
			return l
		},
		Bind: func(context.Context, engine.NewSession) (engine.Engine, error) { return nil, nil },
		Commands: []kind.Command{{Method: "POST", Path: "/session/{id}/fake/greeting", Run: func(_ context.Context, sess *session.Session, _ []byte) (any, error) {
			e, ok := engine.Of(sess).(*fakeEngine)
			if !ok {
				return nil, wire.Errorf(wire.UnsupportedOperation, "not a fake session")
			}
			return e.greeting, nil
		}}},
		WPT: kind.WPT{
			Product:   "fake",
			Recognise: func(name string) bool { return name == "fake" },
			Document: func(body []byte, _ http.Header) []byte {
				return append([]byte("<script>window.fakeEngine = true</script>"), body...)
			},
			Capabilities: func(s kind.Served) map[string]any {
				caps := chromium.WPTCapabilities(s)
				caps["acceptInsecureCerts"] = true // no WPT hosts, no SPKI list: the fake trusts this way
				return caps
			},
		},
	}
}

type fakeLauncher struct {
	greeting string
	binds    *atomic.Int32
}

func (l *fakeLauncher) Launch(*slog.Logger) (kind.Managed, error) {
	greeting := l.greeting
	path, err := chromium.FindDriver(os.Getenv("WDEXT_CHROMEDRIVER"))
	if err != nil {
		return kind.Managed{}, err
	}
	d := &chromium.Driver{Path: path, Bind: func(_ context.Context, s engine.NewSession) (engine.Engine, error) {
		l.binds.Add(1)
		return &fakeEngine{greeting: greeting, driver: s.Driver}, nil
	}}
	return kind.Managed{
		Upstream: d,
		Defaults: chromium.ManagedDefaults(),
		RunInfo:  map[string]any{"fake": true},
	}, nil
}

// fakeEngine collects no garbage: it says which page it would have.
type fakeEngine struct {
	greeting string
	driver   engine.Driver
}

func (*fakeEngine) Name() string { return "Fake" }
func (*fakeEngine) Close() error { return nil }
func (e *fakeEngine) CollectGarbage(ctx context.Context) (*wire.GCResult, error) {
	u, err := engine.CurrentURL(ctx, e.driver)
	if err != nil {
		return nil, err
	}
	return &wire.GCResult{Targets: []wire.GCTarget{{Type: "page", URL: u}}}, nil
}

// The serve path: wdext serve's flags choose the fake kind, its flag
// reaches its launcher, its sessions get its engine, the extension
// commands ask that engine for capabilities, and its own command is
// routed; Selenium's element commands go through as with any engine.
func TestFakeKindServe(t *testing.T) {
	chromiumtest.Require(t)
	var binds atomic.Int32
	kinds := append(registry.Kinds[:len(registry.Kinds):len(registry.Kinds)], fakeKind(&binds))

	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var f serverFlags
	f.register(fs, kinds)
	assert.NilError(t, fs.Parse([]string{"--engine", "fake", "--fake-greeting", "bonjour", "--log-level", "error"}))
	st, err := f.build()
	assert.NilError(t, err)
	assert.NilError(t, st.start(t.Context()))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- st.run(ctx, l, 0) }() // stopped below
	t.Cleanup(func() { stop(); <-done })
	base := "http://" + l.Addr().String()

	pages := e2e.ServePages(t, e2e.Testdata("webdriver"), nil)
	wd := e2e.Session(t, base, chromiumtest.Capabilities())
	assert.NilError(t, wd.Get(pages.A+"/conformance.html"))
	el, err := wd.FindElement(selenium.ByTagName, "body")
	assert.NilError(t, err)
	_, err = el.Text()
	assert.NilError(t, err)
	assert.Equal(t, binds.Load(), int32(1))

	post := func(path string) (int, map[string]any) {
		resp, err := http.Post(base+"/session/"+wd.SessionID()+path, "application/json", strings.NewReader("{}"))
		assert.NilError(t, err)
		defer resp.Body.Close()
		var v map[string]any
		assert.NilError(t, json.NewDecoder(resp.Body).Decode(&v))
		return resp.StatusCode, v
	}
	status, v := post("/fake/greeting")
	assert.Equal(t, status, 200, "%v", v)
	assert.Equal(t, v["value"], "bonjour")
	status, v = post("/wdext/memory/gc")
	assert.Equal(t, status, 200, "%v", v)
	target := v["value"].(map[string]any)["targets"].([]any)[0].(map[string]any)
	assert.Equal(t, target["url"], pages.A+"/conformance.html")
	status, v = post("/wdext/memory/measure")
	assert.Equal(t, status, 500, "%v", v)
	assert.Check(t, is.Contains(v["value"].(map[string]any)["message"], "not available with Fake"), "the capability it lacks, named: %v", v)
}

// The wpt path: wdext wpt --engine fake runs a testharness.js test on the
// fake kind's browser, with its capabilities, its document rewriting and
// its product, which picks the expectations and goes into run_info.
func TestFakeKindWPT(t *testing.T) {
	chromiumtest.Require(t)
	root := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(root, wpt.RootMarker), nil, 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(root, "fake.html"), []byte(`<!doctype html>
<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>
<script>test(() => assert_true(window.fakeEngine, "the fake kind's document hook ran"), "rewritten");</script>
`), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(root, "expectations-fake.json"), []byte(`{}`), 0o644))
	if _, err := wpt.FindTestharness("", root); err != nil {
		e2e.Require(t, "testharness.js (scripts/deps.sh)", err)
	}
	var binds atomic.Int32
	kinds := append(registry.Kinds[:len(registry.Kinds):len(registry.Kinds)], fakeKind(&binds))
	report := filepath.Join(t.TempDir(), "report.json")
	code, err := wptCmd([]string{"--engine", "fake", "--log-level", "error", "--report", report, root}, kinds)
	assert.NilError(t, err)
	assert.Equal(t, code, 0)
	assert.Equal(t, binds.Load(), int32(1))

	b, err := os.ReadFile(report)
	assert.NilError(t, err)
	var r struct {
		RunInfo map[string]any `json:"run_info"`
		Results []struct {
			Test     string `json:"test"`
			Status   string `json:"status"`
			Subtests []struct {
				Status string `json:"status"`
			} `json:"subtests"`
		} `json:"results"`
	}
	assert.NilError(t, json.Unmarshal(b, &r))
	assert.Equal(t, r.RunInfo["product"], "fake")
	assert.Equal(t, r.RunInfo["engine"], "fake")
	assert.Equal(t, r.RunInfo["fake"], true)
	assert.Equal(t, len(r.Results), 1)
	assert.Equal(t, r.Results[0].Status, "OK", "%s", b)
	assert.Equal(t, r.Results[0].Subtests[0].Status, "PASS", "%s", b)
}
