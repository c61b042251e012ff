package webdriver_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine/chromium"
)

// seen is one request as the upstream got it.
type seen struct {
	Method, Path, Host, Origin, ContentType string
	Body                                    []byte
}

// fakeUpstream is a driver that notes every request and answers with
// handler (by default: {"value":null}, or a new session "s1").
type fakeUpstream struct {
	srv     *httptest.Server
	url     *url.URL
	mu      sync.Mutex
	reqs    []seen
	handler http.HandlerFunc
}

func newFakeUpstream(t testing.TB) *fakeUpstream {
	f := &fakeUpstream{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, seen{r.Method, r.URL.Path, r.Host, r.Header.Get("Origin"), r.Header.Get("Content-Type"), body})
		h := f.handler
		f.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if r.Method == "POST" && r.URL.Path == "/session" {
			io.WriteString(w, `{"value":{"sessionId":"s1","capabilities":{"browserName":"chrome"}}}`)
			return
		}
		io.WriteString(w, `{"value":null}`)
	}))
	t.Cleanup(f.srv.Close)
	f.url, _ = url.Parse(f.srv.URL)
	return f
}

func (f *fakeUpstream) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.reqs...)
}

func (f *fakeUpstream) setHandler(h http.HandlerFunc) {
	f.mu.Lock()
	f.handler = h
	f.mu.Unlock()
}

// managed is an Upstream that says wdext owns it (so capability defaults
// apply) without running anything.
type managed struct{ url *url.URL }

func (m managed) Current(context.Context) (*driver.Instance, error) {
	return &driver.Instance{URL: m.url}, nil
}
func (managed) Managed() bool { return true }
func (managed) Close() error  { return nil }

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// serve sends req to h in process and returns the recorded reply. Host
// defaults to a loopback address (httptest.NewRequest says example.com).
func serve(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	if req.Host == "example.com" {
		req.Host = "127.0.0.1:4444"
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

var testDefaults = chromium.Defaults{
	Binary: "/usr/bin/chromium",
	Args:   []string{"--no-sandbox", "--headless=new", "--disable-gpu"},
}
