package driver

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/wdext/wdext/engine"
)

// Instance is one running upstream driver.
type Instance struct {
	URL *url.URL
	// Done is closed when the driver process exits; nil when wdext does not
	// manage the process (a remote upstream).
	Done <-chan struct{}
	// Bind, if set, makes the engine of each session created on the
	// instance (see package engine); nil: the sessions have none.
	Bind engine.Binder
}

// Alive reports whether the instance's process is still running.
func (in *Instance) Alive() bool {
	if in.Done == nil {
		return true
	}
	select {
	case <-in.Done:
		return false
	default:
		return true
	}
}

// Upstream gives wdext a driver to send new sessions to.
type Upstream interface {
	// Current returns a live instance, starting one if needed.
	Current(ctx context.Context) (*Instance, error)
	// Managed reports whether wdext owns the driver process (and so may
	// add capability defaults for the machine it runs on).
	Managed() bool
	// Close stops whatever the upstream started.
	Close() error
}

// Remote is a driver or grid that is already running at URL.
type Remote struct {
	URL *url.URL
	// Bind makes the engines of its sessions (typically engine.First of
	// every engine's binder: any browser may answer).
	Bind engine.Binder
}

// Current returns the remote URL; its liveness is the remote's business.
func (r Remote) Current(context.Context) (*Instance, error) {
	return &Instance{URL: r.URL, Bind: r.Bind}, nil
}

// Managed is false: wdext does not own the remote's browsers.
func (Remote) Managed() bool { return false }

// Close does nothing.
func (Remote) Close() error { return nil }

func (r Remote) String() string { return r.URL.Redacted() }

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StatusReady asks a driver's /status and returns nil when it says ready.
func StatusReady(ctx context.Context, base *url.URL) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.JoinPath("status").String(), nil)
	if err != nil {
		return err
	}
	resp, err := HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var st struct {
		Value struct {
			Ready bool `json:"ready"`
		} `json:"value"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return err
	}
	if !st.Value.Ready {
		return errors.New("driver says not ready")
	}
	return nil
}

// Ready asks the remote's /status.
func (r Remote) Ready(ctx context.Context) bool { return StatusReady(ctx, r.URL) == nil }

// PerSession is an Upstream whose drivers hold one session each: the
// server asks it for a driver of its own for every
// new session instead of calling Current, and tells it when the session
// ends so that it can stop that driver and its browser.
type PerSession interface {
	Upstream
	// StartSession returns a driver for one new session, and the longest
	// POST /session may take on it (0: no limit); it may add to the
	// decoded new-session request req. bind must be called once: with the
	// new session's id, or with "" and the reason when no session was
	// created (the driver is then stopped).
	StartSession(ctx context.Context, req map[string]any) (in *Instance, timeout time.Duration, bind func(id string, failure error), err error)
	// EndSession stops the driver that held session id, if any.
	EndSession(id string)
}

// Defaults add to a decoded new-session request, in place, what the
// machine of a driver wdext runs needs (the browser binary, headless
// switches), never overriding what the client asked for.
type Defaults interface {
	Apply(req map[string]any)
}
