package session

import (
	"context"
	"io"
	"net/url"
	"sync"
	"time"
)

// Session is one live WebDriver session as wdext knows it.
type Session struct {
	ID string
	// Upstream is the driver that holds the session.
	Upstream *url.URL
	// Gone is closed when the driver process that holds the session has
	// exited; nil for a driver wdext does not manage.
	Gone <-chan struct{}
	// BrowserName is the browserName the driver reported ("chrome", …),
	// for messages.
	BrowserName string
	// BiDiURL is the upstream's webSocketUrl, before wdext rewrote it.
	BiDiURL string
	// Capabilities is the upstream's reply, as it came.
	Capabilities map[string]any

	mu       sync.Mutex
	lastUsed time.Time
	// busy counts the commands under way (and open BiDi connections): a
	// session that is busy is never idle, however long they take.
	busy int
	// expired is set once the session was found idle and is being ended:
	// no command may start on it any more.
	expired   bool
	resources map[any]io.Closer
	closed    bool
}

// New returns a session record; the registry takes it with Add.
func New(id string, upstream *url.URL) *Session {
	return &Session{ID: id, Upstream: upstream, lastUsed: time.Now()}
}

// Dead reports whether the driver that held the session has exited.
func (s *Session) Dead() bool {
	if s.Gone == nil {
		return false
	}
	select {
	case <-s.Gone:
		return true
	default:
		return false
	}
}

// Touch marks the session as used now (for --session-timeout).
func (s *Session) Touch() {
	s.mu.Lock()
	s.lastUsed = time.Now()
	s.mu.Unlock()
}

// Begin marks a command (or a BiDi connection) under way until the
// returned end is called; the session is used now and again at its end.
// It fails — ok false — once the session has been found idle and is being
// ended.
func (s *Session) Begin() (end func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.expired {
		return nil, false
	}
	s.busy++
	s.lastUsed = time.Now()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.busy--
			s.lastUsed = time.Now()
			s.mu.Unlock()
		})
	}, true
}

// expireIfIdle marks the session expired if, at now, nothing is under way
// and it was last used longer than timeout ago; it reports whether it did.
func (s *Session) expireIfIdle(now time.Time, timeout time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy == 0 && !s.expired && now.Sub(s.lastUsed) > timeout {
		s.expired = true
	}
	return s.expired
}

// ErrClosed is returned by Resource once the session has ended.
var ErrClosed = errorString("session has ended")

type errorString string

func (e errorString) Error() string { return string(e) }

// Resource returns the session's resource under key, opening it on first
// use. Extensions keep their per-session state here (a connection, an
// engine) so that it is closed exactly once when the session ends.
//
// open runs without the session's lock (it may dial a browser, and Touch
// must not wait for that): two first uses may both open, and the loser's
// resource is closed.
func (s *Session) Resource(key any, open func() (io.Closer, error)) (io.Closer, error) {
	s.mu.Lock()
	r, ok := s.resources[key]
	closed := s.closed
	s.mu.Unlock()
	switch {
	case closed:
		return nil, ErrClosed
	case ok:
		return r, nil
	}
	r, err := open()
	if err != nil {
		return nil, err
	}
	return s.keep(key, r)
}

// Attach gives the session the resource r under key, to be closed when the
// session ends; if the session has ended already, r is closed at once and
// the answer is ErrClosed. A resource already under key wins: r is closed
// and the existing one returned.
func (s *Session) Attach(key any, r io.Closer) (io.Closer, error) { return s.keep(key, r) }

func (s *Session) keep(key any, r io.Closer) (io.Closer, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		r.Close()
		return nil, ErrClosed
	}
	if old, ok := s.resources[key]; ok {
		s.mu.Unlock()
		r.Close()
		return old, nil
	}
	if s.resources == nil {
		s.resources = make(map[any]io.Closer)
	}
	s.resources[key] = r
	s.mu.Unlock()
	return r, nil
}

// Ended reports whether the session has ended (its resources are closed).
func (s *Session) Ended() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Lookup returns the resource under key, if the session has one.
func (s *Session) Lookup(key any) (io.Closer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.resources[key]
	return r, ok
}

// DropResource closes and forgets the resource under key (one that
// broke), so that the next Resource call opens a new one.
func (s *Session) DropResource(key any) {
	s.mu.Lock()
	r, ok := s.resources[key]
	delete(s.resources, key)
	s.mu.Unlock()
	if ok {
		r.Close()
	}
}

// close releases every resource; later Resource calls fail.
func (s *Session) close() {
	s.mu.Lock()
	rs := s.resources
	s.resources, s.closed = nil, true
	s.mu.Unlock()
	for _, r := range rs {
		r.Close()
	}
}

// Registry is the set of live sessions, safe for concurrent use.
type Registry struct {
	mu       sync.RWMutex
	sessions map[string]*Session
	// ended remembers why wdext itself ended recent sessions, so that a
	// client that comes back learns why its session is gone.
	ended     map[string]string
	endedFIFO []string
	// limit is the most sessions live and being created at once (0: no
	// limit); creating counts those Reserve let through that are not yet
	// live (or failed).
	limit, creating int
}

// maxEnded is how many ended sessions the registry remembers.
const maxEnded = 1024

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{sessions: make(map[string]*Session)}
}

// SetLimit sets the most sessions live and being created at once
// (wdext serve --max-sessions); 0 is no limit.
func (r *Registry) SetLimit(n int) {
	r.mu.Lock()
	r.limit = max(n, 0)
	r.mu.Unlock()
}

// Reserve takes a slot for a session about to be created: ok is false when
// the live sessions and those being created already number the limit.
// release gives the slot back; call it once, when the session is in the
// registry (Add) or was not created. Until then it counts as live.
func (r *Registry) Reserve() (release func(), ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.limit > 0 && len(r.sessions)+r.creating >= r.limit {
		return nil, false
	}
	r.creating++
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			r.creating--
			r.mu.Unlock()
		})
	}, true
}

// Capacity says how many sessions are live or being created (used) and
// the limit (0: none): the registry is full when limit > 0 and used >=
// limit.
func (r *Registry) Capacity() (used, limit int) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.sessions) + r.creating, r.limit
}

// Add records s, replacing any session with the same id.
func (r *Registry) Add(s *Session) {
	r.mu.Lock()
	old := r.sessions[s.ID]
	r.sessions[s.ID] = s
	r.mu.Unlock()
	if old != nil && old != s {
		old.close()
	}
}

// Get returns the session with id, if wdext knows it.
func (r *Registry) Get(id string) (*Session, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, ok := r.sessions[id]
	return s, ok
}

// Remove forgets the session and closes its resources. It reports whether
// the session was known.
func (r *Registry) Remove(id string) bool {
	r.mu.Lock()
	s, ok := r.sessions[id]
	delete(r.sessions, id)
	r.mu.Unlock()
	if ok {
		s.close()
	}
	return ok
}

// Note remembers why wdext ends (or ended) the session id, for Why; the
// most recent maxEnded reasons are kept.
func (r *Registry) Note(id, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended == nil {
		r.ended = make(map[string]string)
	}
	if _, known := r.ended[id]; !known {
		if len(r.endedFIFO) == maxEnded {
			delete(r.ended, r.endedFIFO[0])
			r.endedFIFO = r.endedFIFO[1:]
		}
		r.endedFIFO = append(r.endedFIFO, id)
	}
	r.ended[id] = why
}

// Why says why wdext ended the session id, if it did so recently (see
// Note).
func (r *Registry) Why(id string) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	why, ok := r.ended[id]
	return why, ok
}

// All returns a snapshot of the live sessions.
func (r *Registry) All() []*Session {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Session, 0, len(r.sessions))
	for _, s := range r.sessions {
		out = append(out, s)
	}
	return out
}

// Len is the number of live sessions.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.sessions)
}

// ExpireIdle calls expire for each session idle longer than timeout, every
// interval, until ctx ends. A session is idle when no command is under way
// (see Begin) and the last one ended longer than timeout ago; from then on
// no command can start on it. expire is expected to end the session
// upstream and Remove it. This is Grid's --session-timeout.
func (r *Registry) ExpireIdle(ctx context.Context, timeout, interval time.Duration, expire func(context.Context, *Session)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for _, s := range r.All() {
				if s.expireIfIdle(now, timeout) {
					expire(ctx, s)
				}
			}
		}
	}
}
