package forcesample

import (
	"context"
	"time"

	"github.com/wdext/wdext/cdp"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/webkitgtk"
)

// Path is the spec's URI template for the command.
const Path = "/session/{id}/forcesample"

// Register adds the command to srv. An upstream that implements it
// natively keeps answering it; wdext steps in only where the upstream says
// "unknown command".
func Register(srv *webdriver.Server) {
	srv.HandleFallback("POST", Path, Command)
}

// Command is the remote end steps: parameters are ignored but must be a
// JSON object (or absent); the result is null.
func Command(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	var params map[string]any
	if err := webdriver.DecodeArgs(body, &params); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if sess.Inspector != nil {
		if err := WebKitInspector(ctx, sess); err != nil {
			return nil, webdriver.AsError(err)
		}
		return nil, nil
	}
	if webkitgtk.IsEngine(sess.Engine) {
		// A WebKitGTK session of a driver wdext does not run: no
		// inspector, the WebDriver walk.
		if err := WebKitGTK(ctx, sess); err != nil {
			return nil, webdriver.AsError(err)
		}
		return nil, nil
	}
	b, err := cdp.ForSession(ctx, sess)
	if err != nil {
		return nil, webdriver.Errorf(webdriver.UnsupportedOperation, "forcesample: %v", err)
	}
	if err := Chromium(ctx, b); err != nil {
		return nil, webdriver.AsError(err)
	}
	return nil, nil
}
