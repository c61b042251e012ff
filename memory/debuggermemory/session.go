package debuggermemory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/wdext/wdext/cdp"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
)

// state is one WebDriver session's debuggermemory state, kept as a session
// resource so that it goes away with the session.
type state struct {
	mu       sync.Mutex
	browser  *cdp.Browser // the connection the sessions below were made on
	sessions map[target.ID]*targetSession

	alloc allocLog
	live  liveObjects
	gc    gcLog
}

// targetSession is wdext's own flat CDP session to a target. It is not
// the one cdp.Browser.Attach caches for every extension: heap snapshot
// chunks arrive as events of the session that asked, and two snapshots
// on one session would interleave theirs.
type targetSession struct {
	id   target.ID
	s    *cdp.Session
	snap sync.Mutex // one heap snapshot at a time
}

type stateKey struct{}

func (st *state) Close() error { return nil }

func stateOf(sess *session.Session) (*state, error) {
	r, err := sess.Resource(stateKey{}, func() (io.Closer, error) {
		return &state{sessions: map[target.ID]*targetSession{}, alloc: newAllocLog()}, nil
	})
	if err != nil {
		return nil, webdriver.Errorf(webdriver.InvalidSessionID, "%v", err)
	}
	return r.(*state), nil
}

// browser returns the session's CDP connection; commands on a session
// without one are unsupported.
func browser(ctx context.Context, sess *session.Session) (*cdp.Browser, error) {
	b, err := cdp.ForSession(ctx, sess)
	if err != nil {
		return nil, webdriver.Errorf(webdriver.UnsupportedOperation, "debugger memory commands need Chromium's DevTools protocol: %v", err)
	}
	return b, nil
}

var flatten = true

// attach returns wdext's own session to target id on b, attaching on
// first use.
func (st *state) attach(ctx context.Context, b *cdp.Browser, id target.ID) (*targetSession, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.browser != b {
		// A new connection (the old one broke): its sessions are gone.
		st.browser = b
		st.sessions = map[target.ID]*targetSession{}
	}
	if ts, ok := st.sessions[id]; ok {
		return ts, nil
	}
	res, err := cdproto.Call(ctx, b.Conn, target.AttachToTarget, target.AttachToTargetParams{TargetID: id, Flatten: &flatten})
	if err != nil {
		return nil, fmt.Errorf("attaching to target %s: %w", id, err)
	}
	ts := &targetSession{id: id, s: b.Session(string(res.SessionID))}
	st.sessions[id] = ts
	return ts, nil
}

// forget drops the session to a target that failed (closed, crashed).
func (st *state) forget(ts *targetSession) {
	st.mu.Lock()
	if st.sessions[ts.id] == ts {
		delete(st.sessions, ts.id)
	}
	st.mu.Unlock()
}

// stateNoParams is stateOf for a command that takes no parameters: any it
// got are "invalid argument".
func stateNoParams(sess *session.Session, body []byte) (*state, error) {
	if err := decodeStrict(body, &struct{}{}); err != nil {
		return nil, err
	}
	return stateOf(sess)
}

// attachCurrentPage gives a dedicated session to the page of the
// session's current window.
func (st *state) attachCurrentPage(ctx context.Context, sess *session.Session) (*targetSession, error) {
	b, err := browser(ctx, sess)
	if err != nil {
		return nil, err
	}
	page, _, err := currentPage(ctx, sess, b)
	if err != nil {
		return nil, cdpError("finding the current page", err)
	}
	ts, err := st.attach(ctx, b, page.TargetID)
	if err != nil {
		return nil, cdpError("attaching to the page", err)
	}
	return ts, nil
}

// currentPage finds the page target of the session's current window, and
// the out-of-process iframes and workers below it.
func currentPage(ctx context.Context, sess *session.Session, b *cdp.Browser) (*target.Info, []*target.Info, error) {
	handle, err := webdriver.CurrentWindow(ctx, sess)
	if err != nil {
		return nil, nil, err
	}
	page, below, err := b.PageTree(ctx, handle)
	if errors.Is(err, cdp.ErrNoPage) {
		return nil, nil, webdriver.Errorf(webdriver.UnsupportedOperation,
			"cannot tell which page is the current window: %v (the driver's window handles are not CDP target ids)", err)
	}
	return page, below, err
}

// cdpError turns a failed CDP step into a WebDriver error, keeping
// WebDriver errors as they are.
func cdpError(what string, err error) error {
	var we *webdriver.Error
	if errors.As(err, &we) {
		return we
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return webdriver.Errorf(webdriver.Timeout, "%s: %v", what, err)
	}
	return webdriver.Errorf(webdriver.UnknownError, "%s: %v", what, err)
}
