package engine

import (
	"context"
	"net/http"

	"github.com/wdext/wdext/wire"
)

// CurrentWindow asks the driver for the handle of the session's current
// top-level browsing context (GET /session/{id}/window): extension commands
// act where the client is, and only the driver knows where that is. The
// driver's own error ("no such window" when the window was closed, say) is
// passed on as is.
func CurrentWindow(ctx context.Context, d Driver) (string, error) {
	var handle string
	if err := d.Do(ctx, http.MethodGet, "window", nil, &handle); err != nil {
		return "", err
	}
	if handle == "" {
		return "", wire.Errorf(wire.UnknownError, "the driver's current window is not a window handle")
	}
	return handle, nil
}

// CurrentURL asks the driver for the URL of the session's current
// top-level browsing context (GET /session/{id}/url).
func CurrentURL(ctx context.Context, d Driver) (string, error) {
	var u string
	err := d.Do(ctx, http.MethodGet, "url", nil, &u)
	return u, err
}
