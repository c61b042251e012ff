package webkitgtk

import (
	"context"
	"fmt"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/framewalk"
	"github.com/wdext/wdext/engine/webkitgtk/wkinspector"
)

// Engine is a WebKitGTK session's browser that wdext started itself, so
// that it serves WebKit's remote inspector: forcesample through the
// Profiler polyfill in every frame, and the memory commands through
// JavaScriptCore heap snapshots.
type Engine struct {
	driver engine.Driver
	// inspector is the browser's inspector client; the upstream that
	// started the browser owns it and closes it with the browser.
	inspector *wkinspector.Browser
	// agents keep the pages ready for the polyfill (nil without one).
	agents      *agents
	browserName string
}

// nudgingDriver nudges the browser's inspector before each command to the
// driver: WebKitWebDriver's replies wait inside the browser for the same
// held acknowledgement as the inspector's (see wkinspector.Conn.Nudge).
type nudgingDriver struct {
	engine.Driver
	inspector *wkinspector.Browser
}

func (d nudgingDriver) Do(ctx context.Context, method, path string, params, value any) error {
	d.inspector.Nudge()
	return d.Driver.Do(ctx, method, path, params, value)
}

// Name says what the engine is.
func (e *Engine) Name() string { return "WebKitGTK (remote inspector)" }

// Close does nothing: the inspector client goes with the browser.
func (e *Engine) Close() error { return nil }

// Lacks says what WebKit's inspector (WebKitGTK 2.50) lacks, measured.
func (e *Engine) Lacks(capability string) string {
	switch capability {
	case engine.AllocationLog.Name:
		return "WebKit's inspector records no allocations as they happen " +
			"(no counterpart of V8's sampling heap profiler or allocation tracker; heap snapshots carry no allocation stacks)"
	case engine.GCLog.Name:
		return "WebKit's inspector reports collections (Heap.garbageCollected) without sizes, " +
			"and with start and end times of 0 outside a Timeline recording (measured)"
	case engine.AllLeaks.Name:
		return `wdext does not check WebKitGTK's workers for leaks yet; "targets": "page" checks the page's VM, ` +
			"which holds every frame of the page (one web process)"
	}
	return ""
}

// BindRemote is the engine.Binder of WebKitGTK sessions of drivers wdext
// does not run: no inspector, so forcesample walks every frame by
// WebDriver commands (see walk), and nothing else.
func BindRemote(_ context.Context, s engine.NewSession) (engine.Engine, error) {
	name := browserName(s.Capabilities)
	if !IsBrowser(name) {
		return nil, fmt.Errorf("browserName %q is not a WebKitGTK browser", name)
	}
	return &Walker{driver: s.Driver}, nil
}

// Walker is the engine of a WebKitGTK session whose browser wdext did not
// start: forcesample by the WebDriver walk.
type Walker struct{ driver engine.Driver }

// NewWalker is the engine of a WebKitGTK session that reaches its driver
// through d (also for tests of the walk on sessions wdext runs).
func NewWalker(d engine.Driver) *Walker { return &Walker{driver: d} }

// Name says what the engine is.
func (*Walker) Name() string { return "WebKitGTK (WebDriver only)" }

// Close does nothing.
func (*Walker) Close() error { return nil }

// ForceSample walks every frame of the session (package framewalk).
func (w *Walker) ForceSample(ctx context.Context) error { return framewalk.ForceSample(ctx, w.driver) }

// Lacks says why the memory commands are missing.
func (*Walker) Lacks(string) string {
	return "wdext reaches WebKitGTK's memory through the remote inspector of a browser it starts itself (wdext serve --engine webkitgtk)"
}

func browserName(caps map[string]any) string {
	name, _ := caps["browserName"].(string)
	return name
}

var (
	_ engine.Sampler           = (*Engine)(nil)
	_ engine.MemoryMeasurer    = (*Engine)(nil)
	_ engine.GarbageCollector  = (*Engine)(nil)
	_ engine.HeapSource        = (*Engine)(nil)
	_ engine.LiveObjectTracker = (*Engine)(nil)
	_ engine.LeakTracker       = (*Engine)(nil)
	_ engine.Explainer         = (*Engine)(nil)
	_ engine.Sampler           = (*Walker)(nil)
)
