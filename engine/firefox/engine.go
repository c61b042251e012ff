package firefox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/firefox/marionette"
	"github.com/wdext/wdext/engine/framewalk"
	"github.com/wdext/wdext/internal/turn"
	"github.com/wdext/wdext/wire"
)

// BrowserName is the browserName Firefox reports.
const BrowserName = "firefox"

// IsBrowser reports whether a session's browserName is Firefox's.
func IsBrowser(browserName string) bool { return strings.EqualFold(browserName, BrowserName) }

// Engine is a Firefox session's browser that wdext started and is the
// Marionette client of: the memory commands run privileged script in the
// page's content process (Marionette's "system" sandbox).
type Engine struct {
	// conn is the browser's Marionette connection; the translator that
	// started the browser owns it and closes it with the browser.
	conn *marionette.Conn
	// driver reaches the session's driver (the translator), for the frame
	// walk of forcesample.
	driver engine.Driver

	// settingsTurn orders changes of settings, the memory settings every
	// content process follows; it is held while they are sent.
	settingsTurn turn.Turn
	settings     settings
}

// Name says what the engine is.
func (e *Engine) Name() string { return "Firefox (Marionette)" }

// Close does nothing: the connection goes with the browser.
func (e *Engine) Close() error { return nil }

// Lacks says why Firefox does not serve a capability through wdext yet.
func (e *Engine) Lacks(capability string) string {
	switch capability {
	case engine.Leaks.Name, engine.AllLeaks.Name:
		return "the leak check compares heap snapshots, and wdext does not read Firefox's yet (ChromeUtils.saveHeapSnapshot's files; it kills the content process unless a DevTools connection is open in the parent)"
	}
	return ""
}

// system runs script (with args) as privileged script in the content
// process of the session's current page (Marionette's "system" sandbox)
// and returns its result; step names it in errors.
func (e *Engine) system(ctx context.Context, step, script string, args ...any) (json.RawMessage, error) {
	raw, err := e.conn.Call(ctx, "WebDriver:ExecuteScript", map[string]any{"script": script, "args": args, "sandbox": "system"})
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, wire.Errorf(wire.Timeout, "%s: the page's content process did not run wdext's script in time: its main thread is busy (a long script, a dialog)", step)
	}
	if err != nil {
		return nil, engine.Failed(step, err)
	}
	return value(raw), nil
}

// BindRemote declines Firefox sessions of a driver wdext did not start
// (geckodriver, a Grid node): geckodriver is Marionette's one client, so
// wdext cannot reach the content process; the session is forwarded as
// is, without the extension commands.
func BindRemote(_ context.Context, s engine.NewSession) (engine.Engine, error) {
	name, _ := s.Capabilities["browserName"].(string)
	if !IsBrowser(name) {
		return nil, fmt.Errorf("browserName %q is not Firefox", name)
	}
	return nil, errors.New("the extension commands of Firefox need wdext to be Marionette's client (wdext serve --engine firefox): behind --upstream, geckodriver is")
}

// ForceSample forces a sample in every frame's Profiler polyfill, which
// every document of the session runs first (a BiDi preload script), by a
// frame walk: Firefox has no Profiler of its own and no force-sample
// entry point; then in every dedicated worker's, through its
// WorkerDebugger (process.js).
func (e *Engine) ForceSample(ctx context.Context) error {
	if err := framewalk.ForceSample(ctx, e.driver); err != nil {
		return err
	}
	r, err := ask[struct {
		Busy   int      `json:"busy"`
		Errors []string `json:"errors"`
	}](ctx, e, "forceWorkers", forceWorkerScript, "all")
	if err != nil {
		return err
	}
	for _, an := range r.Answers {
		switch {
		case an.err() != nil:
			return an.err()
		case an.Value.Busy > 0:
			return wire.Errorf(wire.Timeout, "%d dedicated worker(s) of content process %d did not take their sample in 5 s: a worker samples when its script yields to its event loop", an.Value.Busy, an.Pid)
		case len(an.Value.Errors) > 0:
			return wire.Errorf(wire.UnknownError, "forcing a sample in a worker of content process %d: %s", an.Pid, an.Value.Errors[0])
		}
	}
	return nil
}
