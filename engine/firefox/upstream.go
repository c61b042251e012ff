package firefox

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/internal/turn"
)

// Upstream runs Firefox for wdext: one browser per session, each with
// wdext's Marionette translation as its driver. It implements
// driver.PerSession.
type Upstream struct {
	// Binary is the default Firefox (a session's moz:firefoxOptions
	// binary wins).
	Binary string
	// StartTimeout bounds a browser's start up to Marionette's greeting
	// (default 30 s).
	StartTimeout time.Duration
	// Stderr, if set, receives the browsers' output.
	Stderr io.Writer

	mu       sync.Mutex
	closed   bool
	sessions map[string]*translator
	pending  map[*translator]bool
}

// Managed is true: wdext owns the browsers.
func (u *Upstream) Managed() bool { return true }

func (u *Upstream) String() string {
	return "managed " + u.Binary + " via Marionette (one per session)"
}

// Current is for commands of sessions wdext does not know: there is no
// shared driver to send them to.
func (u *Upstream) Current(context.Context) (*driver.Instance, error) {
	return nil, errors.New("each Firefox serves one Marionette client per browser: no shared driver")
}

// Ready is true unless closed: browsers start per session.
func (u *Upstream) Ready(context.Context) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return !u.closed
}

// StartSession starts a translator; the browser starts when the new
// session reaches it.
func (u *Upstream) StartSession(context.Context, map[string]any) (*driver.Instance, time.Duration, func(string, error), error) {
	start := u.StartTimeout
	if start == 0 {
		start = 30 * time.Second
	}
	stderr := u.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	t, err := newTranslator(u.Binary, start, stderr)
	if err != nil {
		return nil, 0, nil, err
	}
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		t.close()
		return nil, 0, nil, errors.New("shutting down")
	}
	if u.pending == nil {
		u.pending = map[*translator]bool{}
	}
	u.pending[t] = true
	u.mu.Unlock()
	bind := func(_ context.Context, s engine.NewSession) (engine.Engine, error) {
		t.mu.Lock()
		b := t.browser
		t.mu.Unlock()
		if b == nil {
			return nil, errors.New("the session's Firefox is gone")
		}
		return &Engine{conn: b.conn, driver: s.Driver, settingsTurn: turn.New(), settings: startSettings}, nil
	}
	in := &driver.Instance{URL: t.url, Done: t.done, Bind: bind}
	return in, start + 10*time.Second, u.bindSession(t), nil
}

// bindSession returns StartSession's bind: t becomes session id's, until
// it closes; a session that failed or came too late closes t.
func (u *Upstream) bindSession(t *translator) func(string, error) {
	var once sync.Once
	return func(id string, _ error) {
		once.Do(func() {
			u.mu.Lock()
			delete(u.pending, t)
			ok := id != "" && !u.closed
			if ok {
				if u.sessions == nil {
					u.sessions = map[string]*translator{}
				}
				u.sessions[id] = t
			}
			u.mu.Unlock()
			if !ok {
				t.close()
				return
			}
			go func() { // owned by t: ends when it closes
				<-t.done
				u.mu.Lock()
				if u.sessions[id] == t {
					delete(u.sessions, id)
				}
				u.mu.Unlock()
			}()
		})
	}
}

// EndSession stops the browser that held session id.
func (u *Upstream) EndSession(id string) {
	u.mu.Lock()
	t := u.sessions[id]
	delete(u.sessions, id)
	u.mu.Unlock()
	if t != nil {
		t.close()
	}
}

// Close stops every browser.
func (u *Upstream) Close() error {
	u.mu.Lock()
	u.closed = true
	var ts []*translator
	for _, t := range u.sessions {
		ts = append(ts, t)
	}
	for t := range u.pending {
		ts = append(ts, t)
	}
	u.sessions, u.pending = nil, nil
	u.mu.Unlock()
	var wg sync.WaitGroup
	for _, t := range ts {
		wg.Add(1)
		go func() { // owned by Close, which waits
			defer wg.Done()
			t.close()
		}()
	}
	wg.Wait()
	return nil
}
