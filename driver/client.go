package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// maxReply bounds a reply wdext reads for itself.
const maxReply = 16 << 20

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
// *wire.Error; running out of ctx's time is wire.Timeout.
func (c SessionClient) Do(ctx context.Context, method, path string, params, value any) error {
	what := fmt.Sprintf("%s /session/%s/%s", method, c.ID, path)
	var body io.Reader
	switch p := params.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(p)
	default:
		b, err := json.Marshal(params)
		if err != nil {
			return wire.Errorf(wire.UnknownError, "%s: %v", what, err)
		}
		body = bytes.NewReader(b)
	}
	u := c.Base.JoinPath("session", c.ID)
	if path != "" {
		u = u.JoinPath(path)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return wire.Errorf(wire.UnknownError, "%s: %v", what, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", wire.ContentType)
	}
	hc := c.HTTP
	if hc == nil {
		hc = HTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return wire.Errorf(wire.Timeout, "asking the driver %s: %v", what, err)
		}
		return wire.Errorf(wire.UnknownError, "asking the driver %s: %v", what, err)
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		return wire.Errorf(wire.UnknownError, "reading the driver's reply to %s: %v", what, err)
	}
	if resp.StatusCode != http.StatusOK {
		if we, ok := wire.ParseError(reply); ok {
			return we
		}
		return wire.Errorf(wire.UnknownError, "the driver answered %s with %s", what, resp.Status)
	}
	if value == nil {
		return nil
	}
	var v struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(reply, &v); err != nil {
		return wire.Errorf(wire.UnknownError, "the driver's reply to %s is not JSON: %v", what, err)
	}
	if err := json.Unmarshal(v.Value, value); err != nil {
		return wire.Errorf(wire.UnknownError, "the driver's reply to %s: %s: %v", what, v.Value, err)
	}
	return nil
}
