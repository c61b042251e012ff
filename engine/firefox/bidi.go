package firefox

import (
	"context"
	"fmt"

	"github.com/gorilla/websocket"
)

// addPreloadScript makes source run first in every document of the
// session, in every frame, before the document's own scripts, through
// Firefox's BiDi server (script.addPreloadScript) at wsURL, the session's
// webSocketUrl. The script stays with the session once this connection
// closes, and Firefox lets the client open its own beside it (measured
// on ESR 153).
func addPreloadScript(ctx context.Context, wsURL, source string) error {
	c, _, err := websocket.DefaultDialer.DialContext(ctx, wsURL, nil)
	if err != nil {
		return fmt.Errorf("connecting to Firefox's BiDi server: %w", err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetReadDeadline(dl)
		c.SetWriteDeadline(dl)
	}
	c.SetReadLimit(1 << 20)
	cmd := map[string]any{"id": 1, "method": "script.addPreloadScript", "params": map[string]any{
		"functionDeclaration": "() => {\n" + source + "\n}",
	}}
	if err := c.WriteJSON(cmd); err != nil {
		return fmt.Errorf("script.addPreloadScript: %w", err)
	}
	for {
		var r struct {
			ID      int    `json:"id"`
			Type    string `json:"type"`
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		if err := c.ReadJSON(&r); err != nil {
			return fmt.Errorf("script.addPreloadScript: %w", err)
		}
		switch {
		case r.ID != 1: // an event
		case r.Type == "error":
			return fmt.Errorf("script.addPreloadScript: %s: %s", r.Error, r.Message)
		default:
			return nil
		}
	}
}
