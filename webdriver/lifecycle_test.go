package webdriver_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
)

// A probe of a fallback command that fails for a reason other than
// "unknown command" (a transport failure, a driver error) is not taken as
// "the upstream implements it": the next call asks the upstream again.
// Only a success or "unknown command" is remembered.
func TestFallbackCachesOnlyDefinitiveAnswers(t *testing.T) {
	up := newFakeUpstream(t)
	srv := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: up.url}, Log: quietLog()})
	var ran atomic.Int32
	srv.HandleFallback("POST", "/session/{id}/probe", func(context.Context, *session.Session, []byte) (any, error) {
		ran.Add(1)
		return "wdext", nil
	})
	rec := serve(srv, httptest.NewRequest("POST", "/session", strings.NewReader(`{}`)))
	assert.Equal(t, rec.Code, 200, rec.Body.String())

	var probes atomic.Int32
	answer := func(status int, body string) {
		up.setHandler(func(w http.ResponseWriter, r *http.Request) {
			probes.Add(1)
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(status)
			io.WriteString(w, body)
		})
	}
	call := func() string {
		return serve(srv, httptest.NewRequest("POST", "/session/s1/probe", strings.NewReader(`{}`))).Body.String()
	}
	answer(500, `{"value":{"error":"unknown error","message":"busy","stacktrace":""}}`)
	assert.Assert(t, strings.Contains(call(), "busy"))
	assert.Assert(t, strings.Contains(call(), "busy"))
	assert.Equal(t, probes.Load(), int32(2), "a transient error is asked again")

	answer(404, `{"value":{"error":"unknown command","message":"no","stacktrace":""}}`)
	assert.Equal(t, call(), `{"value":"wdext"}`)
	assert.Equal(t, call(), `{"value":"wdext"}`)
	assert.Equal(t, probes.Load(), int32(3), "unknown command is remembered")
	assert.Equal(t, ran.Load(), int32(2))
}

// With a remote upstream (no process whose exit tells), a session the
// upstream answers "invalid session id" for is dropped, with its state:
// its engine is closed, and wdext no longer knows it.
func TestRemoteSessionDroppedOnInvalidSessionID(t *testing.T) {
	up := newFakeUpstream(t)
	fe := &fakeEngine{}
	srv := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: up.url, Bind: fe.bind}, Log: quietLog()})
	rec := serve(srv, httptest.NewRequest("POST", "/session", strings.NewReader(`{}`)))
	assert.Equal(t, rec.Code, 200, rec.Body.String())
	_, ok := srv.Sessions().Get("s1")
	assert.Assert(t, ok)

	// Other 404s (no such element) keep the session.
	up.setHandler(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(404)
		io.WriteString(w, `{"value":{"error":"no such element","message":"x","stacktrace":""}}`)
	})
	serve(srv, httptest.NewRequest("POST", "/session/s1/element", strings.NewReader(`{"using":"css selector","value":"p"}`)))
	_, ok = srv.Sessions().Get("s1")
	assert.Assert(t, ok, "no such element dropped the session")

	up.setHandler(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(404)
		io.WriteString(w, `{"value":{"error":"invalid session id","message":"session deleted because of page crash","stacktrace":""}}`)
	})
	rec = serve(srv, httptest.NewRequest("GET", "/session/s1/url", nil))
	assert.Equal(t, rec.Code, 404)
	assert.Assert(t, strings.Contains(rec.Body.String(), "page crash"), "the driver's reply passes through: %s", rec.Body)
	_, ok = srv.Sessions().Get("s1")
	assert.Assert(t, !ok, "the session is still registered")
	assert.Equal(t, fe.closed.Load(), int32(1), "its engine was not closed")
}

// An extension command with no deadline of its own stops at the server's
// (Config.CommandTimeout) and answers the W3C "timeout".
func TestCommandDefaultDeadline(t *testing.T) {
	up := newFakeUpstream(t)
	fe := &fakeEngine{}
	srv := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: up.url, Bind: fe.bind}, Log: quietLog(), CommandTimeout: 50 * time.Millisecond})
	srv.Handle("POST", "/session/{id}/hang", func(ctx context.Context, sess *session.Session, _ []byte) (any, error) {
		s, err := engine.Need(sess, engine.ForceSample)
		if err != nil {
			return nil, err
		}
		return nil, s.ForceSample(ctx)
	})
	serve(srv, httptest.NewRequest("POST", "/session", strings.NewReader(`{}`)))
	start := time.Now()
	rec := serve(srv, httptest.NewRequest("POST", "/session/s1/hang", strings.NewReader(`{}`)))
	assert.Equal(t, rec.Code, 500, rec.Body.String())
	assert.Assert(t, strings.Contains(rec.Body.String(), `"error":"timeout"`), rec.Body.String())
	assert.Assert(t, time.Since(start) < 10*time.Second)
}

// fakeEngine is an engine whose ForceSample hangs until its context ends.
type fakeEngine struct{ closed atomic.Int32 }

func (f *fakeEngine) bind(context.Context, engine.NewSession) (engine.Engine, error) { return f, nil }
func (*fakeEngine) Name() string                                                     { return "fake" }
func (f *fakeEngine) Close() error                                                   { f.closed.Add(1); return nil }
func (*fakeEngine) ForceSample(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}
