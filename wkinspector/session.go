package wkinspector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
)

type browserKey struct{}

// ErrNoInspector is returned for sessions whose browser serves no WebKit
// remote inspector.
var ErrNoInspector = errors.New("the session's browser serves no WebKit remote inspector (wdext starts one for the WebKitGTK sessions it manages: wdext serve --engine webkitgtk)")

// ForSession returns the inspector of a WebDriver session's browser: the
// upstream's own client if it has one, else one the session closes when
// it ends.
func ForSession(sess *session.Session) (*Browser, error) {
	in := sess.Inspector
	if in == nil {
		return nil, ErrNoInspector
	}
	if b, ok := in.Client.(*Browser); ok {
		return b, nil
	}
	r, err := sess.Resource(browserKey{}, func() (io.Closer, error) {
		return NewBrowser(in.Addr, in.Connection, in.Automation), nil
	})
	if err != nil {
		return nil, err
	}
	return r.(*Browser), nil
}

// Evaluate runs expression in the page's main frame and decodes its value
// into v.
func (c *Conn) Evaluate(ctx context.Context, expression string, v any) error {
	return c.evaluate(ctx, map[string]any{"expression": expression, "returnByValue": true}, v)
}

func (c *Conn) evaluate(ctx context.Context, params map[string]any, v any) error {
	var r struct {
		Result struct {
			Value       any    `json:"value"`
			Description string `json:"description"`
		} `json:"result"`
		WasThrown bool `json:"wasThrown"`
	}
	if err := c.Call(ctx, "Runtime.evaluate", params, &r); err != nil {
		return err
	}
	if r.WasThrown {
		return fmt.Errorf("evaluating %q threw %s", params["expression"], r.Result.Description)
	}
	return remarshal(r.Result.Value, v)
}

// markKey is the symbol the pages are marked with to tell them apart.
const markKey = `Symbol.for("wdext.inspector.page")`

// CurrentPage returns the page of the session's current top-level
// browsing context: the page whose URL is the one the driver reports;
// pages showing the same URL are told apart by a mark set through the
// inspector and read through the driver (then the client must be in the
// top-level browsing context).
func CurrentPage(ctx context.Context, sess *session.Session) (*Conn, error) {
	b, err := ForSession(sess)
	if err != nil {
		return nil, err
	}
	want, err := webdriver.CurrentURL(ctx, sess)
	if err != nil {
		return nil, err
	}
	var found []*Conn
	for _, fresh := range []bool{false, true} {
		pages, err := b.Pages(ctx, fresh)
		if err != nil {
			return nil, err
		}
		found = found[:0]
		for _, p := range pages {
			var href string
			if err := p.Evaluate(ctx, "location.href", &href); err != nil {
				if ctx.Err() != nil {
					return nil, err
				}
				continue // closing
			}
			if href == want {
				found = append(found, p)
			}
		}
		if len(found) == 1 {
			return found[0], nil
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("no page of the browser's inspector shows %s, the current window's URL", want)
	}
	return pickMarked(ctx, sess, found)
}

// pickMarked tells apart pages that show the same URL.
func pickMarked(ctx context.Context, sess *session.Session, pages []*Conn) (*Conn, error) {
	for i, p := range pages {
		if err := p.Evaluate(ctx, fmt.Sprintf("window[%s] = %d", markKey, i), nil); err != nil {
			return nil, err
		}
	}
	defer func() {
		// Even when the command ran out of time: the marks must go.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		for _, p := range pages {
			p.Evaluate(ctx, fmt.Sprintf("delete window[%s]", markKey), nil)
		}
	}()
	var mark *int
	script := fmt.Sprintf("return window.top === window ? window[%s] : -1", markKey)
	if err := webdriver.AskDriver(ctx, sess, "POST", "execute/sync", map[string]any{"script": script, "args": []any{}}, &mark); err != nil {
		return nil, err
	}
	switch {
	case mark == nil:
		return nil, fmt.Errorf("%d windows show the current window's URL, and the current one is not among them", len(pages))
	case *mark < 0:
		return nil, webdriver.Errorf(webdriver.UnsupportedOperation, "%d windows show the current window's URL: to tell them apart, switch to the top-level browsing context", len(pages))
	case *mark >= len(pages):
		return nil, fmt.Errorf("bad page mark %d", *mark)
	}
	return pages[*mark], nil
}
