package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/wire"
)

// Engine is a session's browser as the extension commands reach it beyond
// WebDriver. What it can do is the capability interfaces of this package
// that it implements.
type Engine interface {
	// Name names the engine in messages: the browser, and how wdext
	// reaches it ("Chromium (CDP)").
	Name() string
	// Close releases what the engine holds for the session (connections,
	// trackers); it is called once, when the session ends.
	Close() error
}

// Explainer is an Engine that can say why it lacks a capability (the
// engine's limit, measured), for the "unsupported operation" message.
type Explainer interface {
	// Lacks says why the engine cannot serve capability (a Capability's
	// Name), or "" for no particular reason.
	Lacks(capability string) string
}

// Driver sends commands of one session to the driver that holds it, as
// wdext's own client.
type Driver interface {
	// Do sends method /session/{id}/path with params (marshalled, or sent
	// as is when a []byte) and decodes the reply's value into value unless
	// it is nil. The driver's W3C errors come back as *wire.Error.
	Do(ctx context.Context, method, path string, params, value any) error
}

// NewSession is what a Binder knows of a session being created.
type NewSession struct {
	ID string
	// Capabilities are the driver's new-session reply.
	Capabilities map[string]any
	// Driver reaches the session's driver.
	Driver Driver
	// StackSamples is the client's wire.StackSamplesCapability: a page's
	// own synchronous sample carries its caller's stack for the whole
	// session. An engine whose pages sample so anyway ignores it.
	StackSamples bool
}

// Binder makes the engine of a new session. A binder that does not serve
// the session declines with a nil Engine and its reason.
type Binder func(ctx context.Context, s NewSession) (Engine, error)

// First binds with the first binder that serves the session (for a remote
// upstream, where any browser may answer). When none does, the session
// gets an engine with no capabilities whose messages give every binder's
// reason.
func First(binders ...Binder) Binder {
	return func(ctx context.Context, s NewSession) (Engine, error) {
		var reasons []string
		for _, b := range binders {
			e, err := b(ctx, s)
			if e != nil {
				return e, nil
			}
			if err != nil {
				reasons = append(reasons, err.Error())
			}
		}
		name, _ := s.Capabilities["browserName"].(string)
		return None(name, strings.Join(reasons, "; ")), nil
	}
}

// None is the engine of a session no engine serves, for a browser named
// browserName: it has no capabilities, and its messages say why.
func None(browserName, why string) Engine { return unbound{browser: browserName, why: why} }

// unbound is the engine of a session no engine serves.
type unbound struct{ browser, why string }

func (u unbound) Name() string {
	if u.browser == "" {
		return "a browser wdext has no engine for"
	}
	return fmt.Sprintf("%s (no engine of wdext's)", u.browser)
}
func (unbound) Close() error          { return nil }
func (u unbound) Lacks(string) string { return u.why }

type engineKey struct{}

// Bind makes e the session's engine, closed when the session ends.
func Bind(sess *session.Session, e Engine) error {
	_, err := sess.Attach(engineKey{}, e)
	return err
}

// Of returns the session's engine, or nil when none was bound.
func Of(sess *session.Session) Engine {
	r, ok := sess.Lookup(engineKey{})
	if !ok {
		return nil
	}
	return r.(Engine)
}

// Capability names a capability interface C for messages: "the GC log".
type Capability[C any] struct{ Name string }

// Need returns the session's engine as capability C, or the W3C
// "unsupported operation" error that says which engine lacks what, and
// why when the engine says.
func Need[C any](sess *session.Session, c Capability[C]) (C, error) {
	e := Of(sess)
	if got, ok := e.(C); ok {
		return got, nil
	}
	var zero C
	return zero, Unsupported(sess, e, c.Name, "")
}

// Unsupported is the error of a capability the session's engine lacks (or
// of a part of one: an engine whose measurer has no page API, say).
func Unsupported(sess *session.Session, e Engine, what, why string) *wire.Error {
	name := sess.BrowserName
	switch {
	case e == nil && sess.Ended():
		return wire.Errorf(wire.InvalidSessionID, "%s: session %s has ended", what, sess.ID)
	case e == nil:
		return wire.Errorf(wire.UnsupportedOperation, "%s: no engine is bound to session %s", what, sess.ID)
	}
	if x, ok := e.(Explainer); ok && why == "" {
		why = x.Lacks(what)
	}
	if name == "" {
		name = e.Name()
	}
	if why == "" {
		why = "not available with " + e.Name()
	}
	return wire.Errorf(wire.UnsupportedOperation, "%s on %s: %s", what, name, why)
}

// Failed names the step of an engine that failed, keeping a W3C error as
// it is (the server maps a deadline that ran out to "timeout", the rest to
// "unknown error").
func Failed(step string, err error) error {
	var we *wire.Error
	if errors.As(err, &we) {
		return we
	}
	return fmt.Errorf("%s: %w", step, err)
}
