package driver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/wdext/wdext/wire"
)

// Transport carries every request wdext sends a driver: proxied commands
// and wdext's own. It never consults HTTP(S)_PROXY (the upstream is local
// or named explicitly, and a proxy must not hijack loopback calls), and
// leaves compression off so that bytes go through as the driver wrote them.
var Transport = &http.Transport{
	Proxy:               nil,
	DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	MaxIdleConns:        256,
	MaxIdleConnsPerHost: 64,
	IdleConnTimeout:     90 * time.Second,
	DisableCompression:  true,
}

// HTTP is the client of wdext's own requests to drivers, on Transport.
var HTTP = &http.Client{Transport: Transport}

// SessionClient sends commands of one session to the driver that holds it,
// as wdext's own client (engine.Driver).
type SessionClient struct {
	// HTTP is the client; nil means HTTP.
	HTTP *http.Client
	// Base is the driver's URL, ID the session's.
	Base *url.URL
	ID   string
}

// Do sends method /session/{id}/path with params (marshalled, or sent as
// is when a []byte: a client's body passed on) and decodes the reply's
// value into value unless it is nil. The driver's W3C errors come back as
// *wire.Error; a failure to reach it wraps the transport's error.
func (c SessionClient) Do(ctx context.Context, method, path string, params, value any) error {
	u := c.Base.JoinPath("session", c.ID)
	if path != "" {
		u = u.JoinPath(path)
	}
	hc := c.HTTP
	if hc == nil {
		hc = HTTP
	}
	err := wire.Call(ctx, hc, method, u.String(), params, value)
	var we *wire.Error
	if err == nil || errors.As(err, &we) {
		return err // the driver's own answer, as it came
	}
	// Not an answer: the W3C error is the command's to choose (a deadline
	// that ran out is "timeout"; see webdriver.Within).
	return fmt.Errorf("asking the driver %s /session/%s/%s: %w", method, c.ID, path, err)
}
