package cdp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/wdext/wdext/session"
)

// Browser is a CDP connection to one WebDriver session's browser, with the
// flat sessions it has attached to its targets kept for reuse: attaching
// costs a round trip, and extension commands run often.
type Browser struct {
	*Conn

	mu       sync.Mutex
	attached map[target.ID]*Session

	// tracing is a one-slot lock: Chromium runs one tracing session at a
	// time, and short users (forcesample) take turns.
	tracing chan struct{}
}

// NewBrowser wraps a connection.
func NewBrowser(c *Conn) *Browser {
	return &Browser{Conn: c, attached: make(map[target.ID]*Session), tracing: make(chan struct{}, 1)}
}

// LockTracing waits, as long as ctx allows, for the browser's tracing to be
// free for the caller, who must call unlock when its trace has ended.
func (b *Browser) LockTracing(ctx context.Context) (unlock func(), err error) {
	select {
	case b.tracing <- struct{}{}:
		return func() { <-b.tracing }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the browser's previous trace to end: %w", ctx.Err())
	}
}

// Targets lists the browser's targets of the given types ("page",
// "iframe", "worker", …; none means all), and forgets sessions of targets
// that are gone.
func (b *Browser) Targets(ctx context.Context, types ...string) ([]*target.Info, error) {
	res, err := cdproto.Call(ctx, b.Conn, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return nil, err
	}
	live := make(map[target.ID]bool, len(res.TargetInfos))
	var out []*target.Info
	for _, t := range res.TargetInfos {
		live[t.TargetID] = true
		if len(types) == 0 || slices.Contains(types, t.Type) {
			out = append(out, t)
		}
	}
	b.mu.Lock()
	for id := range b.attached {
		if !live[id] {
			delete(b.attached, id)
		}
	}
	b.mu.Unlock()
	return out, nil
}

var flatten = true

// Attach returns a flat session to the target, attaching on first use.
func (b *Browser) Attach(ctx context.Context, id target.ID) (*Session, error) {
	b.mu.Lock()
	s, ok := b.attached[id]
	b.mu.Unlock()
	if ok {
		return s, nil
	}
	res, err := cdproto.Call(ctx, b.Conn, target.AttachToTarget, target.AttachToTargetParams{TargetID: id, Flatten: &flatten})
	if err != nil {
		return nil, err
	}
	s = b.Session(string(res.SessionID))
	b.mu.Lock()
	b.attached[id] = s
	b.mu.Unlock()
	return s, nil
}

// Forget drops a cached session (after it failed: the target navigated
// away or crashed), so the next Attach makes a new one.
func (b *Browser) Forget(id target.ID) {
	b.mu.Lock()
	delete(b.attached, id)
	b.mu.Unlock()
}

type browserKey struct{}

// ErrNoCDP is returned for sessions whose driver gave no CDP endpoint.
var ErrNoCDP = errors.New("the session's driver reported no CDP endpoint (goog:chromeOptions.debuggerAddress): not a Chromium session")

// ForSession returns the CDP browser of a WebDriver session, dialing it on
// first use; the session closes it when it ends. A connection that broke
// (browser crashed or quit) is replaced by a new one.
func ForSession(ctx context.Context, sess *session.Session) (*Browser, error) {
	if sess.DebuggerAddress == "" {
		if sess.Engine != "" {
			// Name the browser, so that the message says what is missing
			// where (WebKitGTK's MiniBrowser has no CDP at all).
			return nil, fmt.Errorf("%w (browserName %q)", ErrNoCDP, sess.Engine)
		}
		return nil, ErrNoCDP
	}
	open := func() (io.Closer, error) {
		c, err := Dial(ctx, sess.DebuggerAddress)
		if err != nil {
			return nil, err
		}
		return NewBrowser(c), nil
	}
	r, err := sess.Resource(browserKey{}, open)
	if err != nil {
		return nil, fmt.Errorf("connecting to the browser: %w", err)
	}
	b := r.(*Browser)
	select {
	case <-b.Done():
		sess.DropResource(browserKey{})
		r, err = sess.Resource(browserKey{}, open)
		if err != nil {
			return nil, fmt.Errorf("reconnecting to the browser: %w", err)
		}
		b = r.(*Browser)
	default:
	}
	return b, nil
}

// ErrNoPage is returned by PageTree when no page target has the handle.
var ErrNoPage = errors.New("no page target of the browser has that id")

// PageTree finds the page target of a WebDriver window handle (chromedriver's
// handles are CDP target ids) and the targets below it: its out-of-process
// iframes and its workers, nested ones included, parents before children.
// If no page has the handle but the browser has a single page, that page is
// the one: some drivers' handles are not target ids.
func (b *Browser) PageTree(ctx context.Context, handle string) (page *target.Info, below []*target.Info, err error) {
	all, err := b.Targets(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("listing targets: %w", err)
	}
	var pages []*target.Info
	for _, t := range all {
		if t.Type != "page" {
			continue
		}
		pages = append(pages, t)
		if string(t.TargetID) == handle {
			page = t
		}
	}
	if page == nil && len(pages) == 1 {
		page = pages[0]
	}
	if page == nil {
		return nil, nil, fmt.Errorf("%w: window %q among %d pages", ErrNoPage, handle, len(pages))
	}
	// Descendants by parentId, to a fixed point: an iframe's parent may
	// itself be an iframe, and a nested worker's a worker.
	in := map[target.ID]bool{page.TargetID: true}
	for grew := true; grew; {
		grew = false
		for _, t := range all {
			if (t.Type == "iframe" || t.Type == "worker") && !in[t.TargetID] && in[t.ParentID] {
				in[t.TargetID] = true
				below = append(below, t)
				grew = true
			}
		}
	}
	return page, below, nil
}
