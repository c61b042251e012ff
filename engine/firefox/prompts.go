package firefox

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/wdext/wdext/engine/firefox/marionette"
	"github.com/wdext/wdext/wire"
)

// defaultPrompts is WebDriver classic's default unhandledPromptBehavior.
const defaultPrompts = "dismiss and notify"

// classicPrompts keeps WebDriver classic's handling of user prompts in a
// session whose client did not ask for BiDi. wdext asks for BiDi itself
// (for the Profiler polyfill's preload script), and Firefox handles a
// prompt in a BiDi session as soon as it opens, by the session's
// unhandledPromptBehavior (measured: a confirm() was dismissed before the
// client could read it). So Marionette's session gets "ignore", which
// leaves prompts open, and the translator does what the client's behavior
// says when a command meets one, as classic does. It returns the string
// behavior to emulate ("" when there is nothing to emulate: the client
// asked for BiDi, or gave a per-prompt-type object, which Firefox applies
// as BiDi does).
func classicPrompts(caps map[string]any) string {
	behavior := defaultPrompts
	switch b := caps["unhandledPromptBehavior"].(type) {
	case string:
		behavior = b
	case nil:
	default:
		return ""
	}
	if behavior == "ignore" {
		return ""
	}
	caps["unhandledPromptBehavior"] = "ignore"
	return behavior
}

// promptHandled runs command after Firefox said a prompt is open: it
// accepts or dismisses the prompt as behavior says, then fails with
// Firefox's "unexpected alert open" ("… and notify") or runs the command
// again.
func promptHandled(ctx context.Context, c *marionette.Conn, behavior string, open error, command func() (json.RawMessage, error)) (json.RawMessage, error) {
	handle := "WebDriver:DismissAlert"
	if behavior == "accept" || behavior == "accept and notify" {
		handle = "WebDriver:AcceptAlert"
	}
	if err := c.Send(ctx, handle, nil, nil); err != nil && !hasCode(err, wire.NoSuchAlert) {
		return nil, err
	}
	if behavior == "accept" || behavior == "dismiss" {
		return command()
	}
	return nil, open
}

// hasCode reports whether err is a WebDriver error with code.
func hasCode(err error, code wire.ErrorCode) bool {
	var we *wire.Error
	return errors.As(err, &we) && we.Code == code
}
