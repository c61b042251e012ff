package cdp

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
)

// Browser is a CDP connection to one WebDriver session's browser, with the
// flat sessions it has attached to its targets kept for reuse: attaching
// costs a round trip, and extension commands run often.
type Browser struct {
	*Conn

	mu       sync.Mutex
	attached map[target.ID]*Session

	// Chromium runs one tracing session at a time: tracer is its one
	// owner on this connection.
	tracer tracer

	// Values is state that users of the connection keep with it, gone
	// with it.
	Values sync.Map
}

// NewBrowser wraps a connection.
func NewBrowser(c *Conn) *Browser {
	return &Browser{Conn: c, attached: make(map[target.ID]*Session)}
}

// tracer hands the browser's single tracing session to one holder at a
// time.
type tracer struct {
	mu     sync.Mutex
	holder string        // "" when free
	long   bool          // the holder keeps tracing on until told to stop
	free   chan struct{} // closed when the holder lets go
}

// TracingBusyError is LockTracing's answer when a holder that keeps
// tracing on indefinitely has it.
type TracingBusyError struct{ Holder string }

func (e *TracingBusyError) Error() string {
	return "the browser's tracing is held by " + e.Holder
}

// LockTracing makes holder the owner of the browser's tracing until it
// calls unlock. A brief holder is waited for, as long as ctx allows; a
// long one (long: it keeps tracing on until told to stop, like a GC log)
// is not, the answer is a *TracingBusyError at once.
func (b *Browser) LockTracing(ctx context.Context, holder string, long bool) (unlock func(), err error) {
	t := &b.tracer
	for {
		t.mu.Lock()
		if t.holder == "" {
			free := make(chan struct{})
			t.holder, t.long, t.free = holder, long, free
			t.mu.Unlock()
			var once sync.Once
			return func() {
				once.Do(func() {
					t.mu.Lock()
					t.holder, t.long, t.free = "", false, nil
					t.mu.Unlock()
					close(free)
				})
			}, nil
		}
		if t.long {
			h := t.holder
			t.mu.Unlock()
			return nil, &TracingBusyError{Holder: h}
		}
		free := t.free
		t.mu.Unlock()
		select {
		case <-free:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the browser's previous trace to end: %w", ctx.Err())
		}
	}
}

// IsTracingStarted reports whether err is the browser's refusal of
// Tracing.start because a tracing session (another client's: DevTools,
// chromedriver's performance log) is already running. CDP gives that
// refusal only the generic server-error code, so its message tells.
func IsTracingStarted(err error) bool {
	var ce *Error
	return errors.As(err, &ce) && ce.Code == -32000 && strings.Contains(ce.Message, "already")
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

// Attach returns a flat session to the target, attaching on first use.
func (b *Browser) Attach(ctx context.Context, id target.ID) (*Session, error) {
	b.mu.Lock()
	s, ok := b.attached[id]
	b.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := b.AttachSession(ctx, id)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.attached[id] = s
	b.mu.Unlock()
	return s, nil
}

// AttachSession attaches a new flat session to the target, which the
// caller keeps: for commands whose events must not mix with another
// session's (heap snapshot chunks arrive on the session that asked).
func (b *Browser) AttachSession(ctx context.Context, id target.ID) (*Session, error) {
	res, err := cdproto.Call(ctx, b.Conn, target.AttachToTarget, target.AttachToTargetParams{TargetID: id, Flatten: new(true)})
	if err != nil {
		return nil, err
	}
	return b.Session(string(res.SessionID)), nil
}

// Forget drops a cached session (after it failed: the target navigated
// away or crashed), so the next Attach makes a new one.
func (b *Browser) Forget(id target.ID) {
	b.mu.Lock()
	delete(b.attached, id)
	b.mu.Unlock()
}

// ErrNoPage is returned by PageTree when no page target has the handle
// (as a *NoPageError).
var ErrNoPage = errors.New("no page target of the browser has that id")

// NoPageError is PageTree's answer when no page target has the handle: it
// says how many pages the browser has.
type NoPageError struct {
	Handle string
	Pages  int
}

func (e *NoPageError) Error() string {
	return fmt.Sprintf("%v: window %q among %d pages", ErrNoPage, e.Handle, e.Pages)
}

// Is makes a NoPageError match ErrNoPage.
func (e *NoPageError) Is(target error) bool { return target == ErrNoPage }

// targetID matches CDP target ids, as chromedriver's window handles are:
// 32 upper-case hexadecimal digits.
var targetID = regexp.MustCompile(`^[0-9A-F]{32}$`)

// IsTargetID reports whether a window handle has the form of a CDP target
// id.
func IsTargetID(handle string) bool { return targetID.MatchString(handle) }

// PageTree finds the page target of a WebDriver window handle (chromedriver's
// handles are CDP target ids) and the targets below it: its out-of-process
// iframes and its workers, nested ones included, parents before children.
// If no page has the handle but the browser has a single page, that page is
// the one when the handle is not a target id: some drivers' handles are
// not. A target id that no page has is a window that was closed.
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
	if page == nil && len(pages) == 1 && !IsTargetID(handle) {
		page = pages[0]
	}
	if page == nil {
		return nil, nil, &NoPageError{Handle: handle, Pages: len(pages)}
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
