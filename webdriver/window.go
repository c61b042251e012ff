package webdriver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
	var handle string
	if err := AskDriver(ctx, sess, http.MethodGet, "window", nil, &handle); err != nil {
		return "", err
	}
	if handle == "" {
		return "", Errorf(UnknownError, "the driver's current window is not a window handle")
	}
	return handle, nil
}

// CurrentURL asks the session's driver for the URL of its current
// top-level browsing context (GET /session/{id}/url).
func CurrentURL(ctx context.Context, sess *session.Session) (string, error) {
	var u string
	err := AskDriver(ctx, sess, http.MethodGet, "url", nil, &u)
	return u, err
}

// AskDriver sends a command of the session to its driver, as wdext's own
// client, and decodes the reply's value into value. params is marshalled,
// unless it is a []byte body. The driver's error is passed on as is.
func AskDriver(ctx context.Context, sess *session.Session, method, path string, params, value any) error {
	what := fmt.Sprintf("%s /session/%s/%s", method, sess.ID, path)
	var body io.Reader
	switch p := params.(type) {
	case nil:
	case []byte: // a client's request body, passed on as it came
		body = bytes.NewReader(p)
	default:
		b, err := json.Marshal(params)
		if err != nil {
			return Errorf(UnknownError, "%s: %v", what, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, sess.Upstream.JoinPath("session", sess.ID, path).String(), body)
	if err != nil {
		return Errorf(UnknownError, "%s: %v", what, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", ContentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return Errorf(Timeout, "asking the driver %s: %v", what, err)
		}
		return Errorf(UnknownError, "asking the driver %s: %v", what, err)
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Errorf(UnknownError, "reading the driver's reply to %s: %v", what, err)
	}
	if resp.StatusCode != http.StatusOK {
		if we, ok := ParseError(reply); ok {
			return we
		}
		return Errorf(UnknownError, "the driver answered %s with %s", what, resp.Status)
	}
	var v struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(reply, &v); err != nil {
		return Errorf(UnknownError, "the driver's reply to %s is not JSON: %v", what, err)
	}
	if value == nil {
		return nil
	}
	if err := json.Unmarshal(v.Value, value); err != nil {
		return Errorf(UnknownError, "the driver's reply to %s: %s: %v", what, v.Value, err)
	}
	return nil
}
