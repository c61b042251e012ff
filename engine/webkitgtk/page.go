package webkitgtk

import (
	"context"
	"fmt"
	"time"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/webkitgtk/wkinspector"
	"github.com/wdext/wdext/wire"
)

// markKey is the symbol the pages are marked with to tell them apart.
const markKey = `Symbol.for("wdext.inspector.page")`

// currentPage returns the page of the session's current top-level
// browsing context: the page whose URL is the one the driver reports;
// pages showing the same URL are told apart by a mark set through the
// inspector and read through the driver (then the client must be in the
// top-level browsing context).
func (e *Engine) currentPage(ctx context.Context) (*wkinspector.Conn, error) {
	b := e.inspector
	want, err := engine.CurrentURL(ctx, e.driver)
	if err != nil {
		return nil, err
	}
	var found []*wkinspector.Conn
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
	return pickMarked(ctx, e.driver, found)
}

// pickMarked tells apart pages that show the same URL.
func pickMarked(ctx context.Context, d engine.Driver, pages []*wkinspector.Conn) (*wkinspector.Conn, error) {
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
	if err := d.Do(ctx, "POST", "execute/sync", map[string]any{"script": script, "args": []any{}}, &mark); err != nil {
		return nil, err
	}
	switch {
	case mark == nil:
		return nil, fmt.Errorf("%d windows show the current window's URL, and the current one is not among them", len(pages))
	case *mark < 0:
		return nil, wire.Errorf(wire.UnsupportedOperation, "%d windows show the current window's URL: to tell them apart, switch to the top-level browsing context", len(pages))
	case *mark >= len(pages):
		return nil, fmt.Errorf("bad page mark %d", *mark)
	}
	return pages[*mark], nil
}
