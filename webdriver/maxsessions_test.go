package webdriver_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

// --max-sessions: New Session beyond the limit is "session not created"
// (HTTP 500) without asking the driver, /status says ready false while
// full, and a deleted session frees its slot.
func TestMaxSessions(t *testing.T) {
	up := newFakeUpstream(t)
	var n atomic.Int32
	up.setHandler(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if r.Method == "POST" && r.URL.Path == "/session" {
			fmt.Fprintf(w, `{"value":{"sessionId":"s%d","capabilities":{"browserName":"chrome"}}}`, n.Add(1))
			return
		}
		if r.URL.Path == "/status" {
			io.WriteString(w, `{"value":{"ready":true,"message":""}}`)
			return
		}
		io.WriteString(w, `{"value":null}`)
	})
	srv := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: up.url}, Log: quietLog(), MaxSessions: 2})
	newSession := func() *httptest.ResponseRecorder {
		return serve(srv, httptest.NewRequest("POST", "/session", strings.NewReader(`{"capabilities":{}}`)))
	}
	for i := 1; i <= 2; i++ {
		ready, msg := status(t, srv, "/status")
		assert.Assert(t, ready, "with %d of 2 sessions: %s", i-1, msg)
		rec := newSession()
		assert.Equal(t, rec.Code, 200, "%s", rec.Body)
	}
	ready, msg := status(t, srv, "/status")
	assert.Assert(t, !ready, "full")
	assert.Assert(t, strings.Contains(msg, "full") && strings.Contains(msg, "--max-sessions"), "%s", msg)

	asked := len(up.requests())
	rec := newSession()
	assert.Equal(t, rec.Code, 500, "%s", rec.Body)
	e, ok := wire.ParseError(rec.Body.Bytes())
	assert.Assert(t, ok, "%s", rec.Body)
	assert.Equal(t, e.Code, wire.SessionNotCreated)
	assert.Assert(t, strings.Contains(e.Message, "2") && strings.Contains(e.Message, "--max-sessions"), "%s", e.Message)
	assert.Equal(t, len(up.requests()), asked, "the driver was asked for a session beyond the limit")

	rec = serve(srv, httptest.NewRequest("DELETE", "/session/s1", nil))
	assert.Equal(t, rec.Code, 200, "%s", rec.Body)
	ready, msg = status(t, srv, "/status")
	assert.Assert(t, ready, "after a delete: %s", msg)
	rec = newSession()
	assert.Equal(t, rec.Code, 200, "%s", rec.Body)
}

// Concurrent New Sessions never exceed the limit: a session being created
// holds its slot.
func TestMaxSessionsConcurrent(t *testing.T) {
	up := newFakeUpstream(t)
	var n atomic.Int32
	release := make(chan struct{})
	up.setHandler(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		<-release
		fmt.Fprintf(w, `{"value":{"sessionId":"s%d","capabilities":{"browserName":"chrome"}}}`, n.Add(1))
	})
	srv := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: up.url}, Log: quietLog(), MaxSessions: 3})
	const clients = 8
	codes := make(chan int, clients)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() { // owned by the test, which waits
			defer wg.Done()
			codes <- serve(srv, httptest.NewRequest("POST", "/session", strings.NewReader(`{}`))).Code
		}()
	}
	// The refused ones answer at once; the others wait for the driver.
	refused := 0
	for range clients - 3 {
		assert.Equal(t, <-codes, 500)
		refused++
	}
	close(release)
	wg.Wait()
	close(codes)
	for c := range codes {
		assert.Equal(t, c, 200)
	}
	assert.Equal(t, srv.Sessions().Len(), 3)
	assert.Equal(t, refused, clients-3)
}
