package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
)

// CurrentWindow asks the session's driver for the handle of its current
// top-level browsing context (GET /session/{id}/window). With chromedriver
// a window handle is the page's CDP target id. The driver's own error
// ("no such window" when the window was closed, say) is passed on as is.
func CurrentWindow(ctx context.Context, sess *session.Session) (string, error) {
	u := sess.Upstream.JoinPath("session", sess.ID, "window")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", webdriver.Errorf(webdriver.UnknownError, "asking the driver for the current window: %v", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", webdriver.Errorf(webdriver.Timeout, "asking the driver for the current window: %v", err)
		}
		return "", webdriver.Errorf(webdriver.UnknownError, "asking the driver for the current window: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", webdriver.Errorf(webdriver.UnknownError, "reading the driver's current window: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		if we, ok := webdriver.ParseError(body); ok {
			return "", we
		}
		return "", webdriver.Errorf(webdriver.UnknownError, "the driver answered GET /session/%s/window with %s", sess.ID, resp.Status)
	}
	var v struct {
		Value string `json:"value"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.Value == "" {
		return "", webdriver.Errorf(webdriver.UnknownError, "the driver's current window %s is not a window handle (%v)", body, err)
	}
	return v.Value, nil
}

// describe names a target for messages: "dedicated worker https://…".
func describe(typ, url string) string {
	kind := typ
	switch typ {
	case "worker":
		kind = "dedicated worker"
	case "iframe":
		kind = "out-of-process iframe"
	}
	if url == "" {
		return kind
	}
	return fmt.Sprintf("%s %s", kind, url)
}
