package webdriver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/wdext/wdext/session"
)

// CurrentWindow asks the session's driver for the handle of its current
// top-level browsing context (GET /session/{id}/window): extension commands
// act where the client is, and only the driver knows where that is. With
// chromedriver a window handle is the page's CDP target id. The driver's
// own error ("no such window" when the window was closed, say) is passed on
// as is.
func CurrentWindow(ctx context.Context, sess *session.Session) (string, error) {
	u := sess.Upstream.JoinPath("session", sess.ID, "window")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", Errorf(UnknownError, "asking the driver for the current window: %v", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", Errorf(Timeout, "asking the driver for the current window: %v", err)
		}
		return "", Errorf(UnknownError, "asking the driver for the current window: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", Errorf(UnknownError, "reading the driver's current window: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		if we, ok := ParseError(body); ok {
			return "", we
		}
		return "", Errorf(UnknownError, "the driver answered GET /session/%s/window with %s", sess.ID, resp.Status)
	}
	var v struct {
		Value string `json:"value"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.Value == "" {
		return "", Errorf(UnknownError, "the driver's current window %s is not a window handle (%v)", body, err)
	}
	return v.Value, nil
}
