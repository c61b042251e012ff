package webkitgtk

import (
	"context"
	"encoding/json"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/kind"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/wire"
)

// NewWindowPath is WebDriver's New Window command.
const NewWindowPath = "/session/{id}/window/new"

// newWindow is what WebKitGTK sessions need on top of plain forwarding:
// New Window prepares the new window's page (the polyfill's bootstrap
// script) before the client hears of it, so before it can navigate there.
// WebKitGTK opens no window from script (window.open returns null under
// automation, measured), so every window but the first comes this way.
var newWindow = kind.Command{Method: "POST", Path: NewWindowPath, Run: newWindowCommand}

func newWindowCommand(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	var v json.RawMessage
	d := driver.SessionClient{Base: sess.Upstream, ID: sess.ID}
	if err := d.Do(ctx, "POST", "window/new", body, &v); err != nil {
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
