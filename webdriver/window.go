package webdriver

import (
	"context"
	"net/http"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/session"
)

// AskDriver sends a command of the session to its driver, as wdext's own
// client (driver.SessionClient, on driver.Transport, the proxy's default),
// and decodes the reply's value into value. params is marshalled, unless
// it is a []byte body. The driver's error is passed on as is.
func AskDriver(ctx context.Context, sess *session.Session, method, path string, params, value any) error {
	return sessionDriver(sess, nil).Do(ctx, method, path, params, value)
}

func sessionDriver(sess *session.Session, c *http.Client) driver.SessionClient {
	return driver.SessionClient{HTTP: c, Base: sess.Upstream, ID: sess.ID}
}
