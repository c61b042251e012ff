package forcesample

import (
	"context"
	"time"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

// timeout bounds one force: arming, one trigger per realm, disarming.
// It outlasts the wait of about 10 s that Chromium's Tracing.start makes
// now and then (engine/chromium, "Force Sample"), so such a force is
// slow, not failed; a page that cannot take the samples fails sooner,
// with its state.
const timeout = 30 * time.Second

// Register adds the command to srv. An upstream that implements it
// natively keeps answering it; wdext steps in only where the upstream says
// "unknown command".
func Register(srv *webdriver.Server) {
	srv.HandleFallback("POST", wire.ForceSamplePath, Command)
}

// Command is the remote end steps: parameters are ignored but must be a
// JSON object (or absent); the result is null. The session's engine takes
// the samples.
func Command(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	var params map[string]any
	if err := webdriver.DecodeArgs(body, &params); err != nil {
		return nil, err
	}
	s, err := engine.Need(sess, engine.ForceSample)
	if err != nil {
		return nil, err
	}
	return webdriver.Within(ctx, timeout, "forcesample", func(ctx context.Context) (any, error) {
		return nil, s.ForceSample(ctx)
	})
}
