package webdriver_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/webdriver"
)

// dying is a managed upstream whose process "exits" when the test closes
// done.
type dying struct {
	url  *url.URL
	done chan struct{}
}

func (d dying) Current(context.Context) (*driver.Instance, error) {
	return &driver.Instance{URL: d.url, Done: d.done}, nil
}
func (dying) Managed() bool { return true }
func (dying) Close() error  { return nil }

// syncBuffer is a log destination the test reads while the server writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitLog waits, up to 10 s, until the log holds want.
func waitLog(log *syncBuffer, want string) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(log.String(), want) {
			return true
		}
	}
	return false
}

// A driver process that exits while it holds sessions is an error, with
// the sessions lost (issue 28: only a debug line told of it).
func TestDriverDeathLoggedWithLostSessions(t *testing.T) {
	up := newFakeUpstream(t)
	d := dying{url: up.url, done: make(chan struct{})}
	var log syncBuffer
	srv := webdriver.NewServer(webdriver.Config{Upstream: d, Log: slog.New(slog.NewTextHandler(&log, nil))})
	rec := serve(srv, httptest.NewRequest("POST", "/session", strings.NewReader(`{}`)))
	assert.Equal(t, rec.Code, 200, rec.Body.String())
	close(d.done)
	assert.Assert(t, waitLog(&log, `level=ERROR msg="driver process exited: its sessions are lost" upstream=`+up.url.String()+` sessions=[s1]`), "%s", log.String())
}
