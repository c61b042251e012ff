package webkitgtk

import (
	"context"
	"encoding/json"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

// NewWindowPath is WebDriver's New Window command.
const NewWindowPath = "/session/{id}/window/new"

// Register adds what WebKitGTK sessions need on top of plain forwarding:
// New Window prepares the new window's page (the polyfill's bootstrap
// script) before the client hears of it, so before it can navigate there.
// WebKitGTK opens no window from script (window.open returns null under
// automation, measured), so every window but the first comes this way.
func Register(srv *webdriver.Server) {
	srv.Handle("POST", NewWindowPath, newWindowCommand)
}

func newWindowCommand(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	var v json.RawMessage
	if err := webdriver.AskDriver(ctx, sess, "POST", "window/new", body, &v); err != nil {
		return nil, err
	}
	// The engine of sessions whose browser wdext started has the
	// inspector; a remote WebKitGTK's has none to prepare.
	if e, ok := engine.Of(sess).(*Engine); ok {
		if err := e.inspector.FindNew(ctx, 1); err != nil {
			return nil, wire.Errorf(wire.UnknownError, "the new window was opened, but preparing it in the inspector failed: %v", err)
		}
		if e.agents != nil {
			if err := e.agents.wait(ctx); err != nil {
				return nil, wire.Errorf(wire.UnknownError, "the new window was opened, but preparing it in the inspector failed: %v", err)
			}
		}
	}
	return v, nil
}
