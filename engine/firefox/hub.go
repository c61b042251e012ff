package firefox

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/wdext/wdext/engine/firefox/marionette"
)

var (
	//go:embed hub.js
	hubScript string
	//go:embed process.js
	processScript string
)

// startSettings are a session's memory settings at its start: no
// allocation tracking, no GC log.
var startSettings = settings{P: 1}

// installHub puts wdext's hub in Firefox's parent process and its
// Debugger in every content process, running or yet to start (hub.js,
// process.js), by Marionette's chrome context, which Firefox allows with
// -remote-allow-system-access. It runs before the client has the session,
// so no client command meets the chrome context.
func installHub(ctx context.Context, c *marionette.Conn) error {
	if err := c.Send(ctx, "Marionette:SetContext", map[string]any{"value": "chrome"}, nil); err != nil {
		return fmt.Errorf("the chrome context of Marionette: %w", err)
	}
	_, err := c.Call(ctx, "WebDriver:ExecuteScript", map[string]any{"script": hubScript, "args": []any{processScript, startSettings}})
	if err2 := c.Send(ctx, "Marionette:SetContext", map[string]any{"value": "content"}, nil); err == nil {
		err = err2
	}
	if err != nil {
		return fmt.Errorf("wdext's Debugger in Firefox's processes: %w", err)
	}
	return nil
}
