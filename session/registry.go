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
	// Engine is the browserName the driver reported ("chrome", …).
	Engine string
	// DebuggerAddress is Chromium's CDP endpoint (host:port), if any.
	DebuggerAddress string
	// Inspector is where the session's browser serves WebKit's remote
	// inspector, if it does.
	Inspector *WebKitInspector
	// BiDiURL is the upstream's webSocketUrl, before wdext rewrote it.
	BiDiURL string
	// Capabilities is the upstream's reply, as it came.
	Capabilities map[string]any

	mu        sync.Mutex
	lastUsed  time.Time
	resources map[any]io.Closer
	closed    bool
}

// WebKitInspector is a WebKitGTK browser's remote inspector
// (WEBKIT_INSPECTOR_HTTP_SERVER).
type WebKitInspector struct {
	// Addr is its HTTP server, host:port.
	Addr string
	// Connection is the connection number of its target paths
	// (/socket/{connection}/{target}/WebPage).
	Connection int
	// Automation is the automation session's target number, which must
	// never be opened: that takes the browser from its driver.
	Automation int
	// Client, if set, is the open inspector client (a *wkinspector.Browser)
	// of the upstream that started the browser, which owns it.
	Client any
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

func (s *Session) idleSince() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastUsed
}

// ErrClosed is returned by Resource once the session has ended.
var ErrClosed = errorString("session has ended")

type errorString string

func (e errorString) Error() string { return string(e) }

// Resource returns the session's resource under key, opening it on first
// use. Extensions keep their per-session state here (a CDP connection, a
// tracing arm) so that it is closed exactly once when the session ends.
// open runs under the session's lock: keep it short and bounded by ctx.
func (s *Session) Resource(key any, open func() (io.Closer, error)) (io.Closer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if r, ok := s.resources[key]; ok {
		return r, nil
	}
	r, err := open()
	if err != nil {
		return nil, err
	}
	if s.resources == nil {
		s.resources = make(map[any]io.Closer)
	}
	s.resources[key] = r
	return r, nil
}

// DropResource closes and forgets the resource under key (e.g. a CDP
// connection that broke), so that the next Resource call opens a new one.
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
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{sessions: make(map[string]*Session)}
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
// interval, until ctx ends. expire is expected to end the session upstream
// and Remove it. This is Grid's --session-timeout.
func (r *Registry) ExpireIdle(ctx context.Context, timeout, interval time.Duration, expire func(context.Context, *Session)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for _, s := range r.All() {
				if now.Sub(s.idleSince()) > timeout {
					expire(ctx, s)
				}
			}
		}
	}
}
