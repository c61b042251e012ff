package wdclient

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/tebeka/selenium"
	"github.com/wdext/wdext/wire"
)

// Client sends extension commands to a WebDriver endpoint.
type Client struct {
	// URL is the endpoint, as given to selenium.NewRemote (with or
	// without /wd/hub).
	URL  string
	HTTP *http.Client
}

// For returns a client for the endpoint wd was created with. tebeka keeps
// the URL in an unexported field; it is read, never written.
func For(wd selenium.WebDriver) (*Client, error) {
	v := reflect.ValueOf(wd)
	if v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct {
		if f := v.Elem().FieldByName("urlPrefix"); f.IsValid() && f.Kind() == reflect.String {
			return &Client{URL: f.String()}, nil
		}
	}
	return nil, fmt.Errorf("wdclient: cannot find the endpoint of a %T: use Client{URL: …}", wd)
}

// ForceSample makes every started Profiler of wd's session take a sample
// (JS Self-Profiling "Force Sample").
func ForceSample(wd selenium.WebDriver) error {
	c, err := For(wd)
	if err != nil {
		return err
	}
	return c.ForceSample(context.Background(), wd.SessionID())
}

// ForceSample sends POST /session/{id}/forcesample.
func (c *Client) ForceSample(ctx context.Context, sessionID string) error {
	return c.Do(ctx, http.MethodPost, "/session/"+sessionID+"/forcesample", struct{}{}, nil)
}

// Do sends a command and decodes the reply's value into out (if not nil).
// A W3C error reply comes back as a *wire.Error.
func (c *Client) Do(ctx context.Context, method, path string, params, out any) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	return wire.Call(ctx, hc, method, strings.TrimSuffix(c.URL, "/")+path, params, out)
}
