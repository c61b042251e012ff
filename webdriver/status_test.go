package webdriver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

// status asks srv's /status and checks the W3C shape: {"value":{"ready":
// bool,"message":string}}, nothing else.
func status(t *testing.T, srv http.Handler, path string) (bool, string) {
	t.Helper()
	rec := serve(srv, httptest.NewRequest("GET", path, nil))
	assert.Equal(t, rec.Code, 200, "%s", rec.Body)
	assert.Equal(t, rec.Header().Get("Content-Type"), wire.ContentType)
	var env map[string]map[string]any
	assert.NilError(t, json.Unmarshal(rec.Body.Bytes(), &env), "%s", rec.Body)
	assert.Equal(t, len(env), 1, "%s", rec.Body)
	v := env["value"]
	ready, ok := v["ready"].(bool)
	assert.Assert(t, ok, "ready is not a boolean: %s", rec.Body)
	msg, ok := v["message"].(string)
	assert.Assert(t, ok, "message is not a string: %s", rec.Body)
	return ready, msg
}

func TestStatusRemote(t *testing.T) {
	var notReady atomic.Bool
	up := newFakeUpstream(t)
	up.setHandler(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"value":{"ready":%v,"message":"driver says"}}`, !notReady.Load())
	})
	srv := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: up.url}, Log: quietLog()})
	for _, path := range []string{"/status", "/wd/hub/status"} {
		ready, _ := status(t, srv, path)
		assert.Assert(t, ready)
	}
	notReady.Store(true)
	ready, msg := status(t, srv, "/status")
	assert.Assert(t, !ready)
	assert.Assert(t, msg != "")

	down := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: closedURL(t)}, Log: quietLog()})
	ready, _ = status(t, down, "/status")
	assert.Assert(t, !ready, "an unreachable upstream is not ready")
}

// A managed driver that was never started is ready (the first new session
// starts it); one that failed to start is not.
func TestStatusManagedLazy(t *testing.T) {
	d := &chromium.Driver{Path: filepath.Join(t.TempDir(), "no-such-chromedriver")}
	srv := webdriver.NewServer(webdriver.Config{Upstream: d, Log: quietLog()})
	ready, _ := status(t, srv, "/status")
	assert.Assert(t, ready, "before the first start")
	rec := serve(srv, httptest.NewRequest("POST", "/session", strings.NewReader("{}")))
	assert.Equal(t, rec.Code, 500, "%s", rec.Body)
	ready, _ = status(t, srv, "/status")
	assert.Assert(t, !ready, "after a failed start")
	d.Close()
	ready, _ = status(t, srv, "/status")
	assert.Assert(t, !ready, "after Close")
}

// /status says ready false while chromedriver starts (without waiting for
// it), true once it answers, true again (lazily) after it died, and false
// once wdext stopped it.
func TestStatusWhileDriverStarts(t *testing.T) {
	path := chromiumtest.Require(t)
	slow := filepath.Join(t.TempDir(), "slow-chromedriver")
	assert.NilError(t, os.WriteFile(slow, []byte("#!/bin/sh\nsleep 1\nexec "+path+" \"$@\"\n"), 0o755))
	d := &chromium.Driver{Path: slow}
	t.Cleanup(func() { d.Close() })
	srv := webdriver.NewServer(webdriver.Config{Upstream: d, Log: quietLog()})

	ready, _ := status(t, srv, "/status")
	assert.Assert(t, ready, "never started: ready, the first session starts it")

	started := make(chan error, 1)
	go func() {
		_, err := d.Current(context.Background())
		started <- err
	}()
	sawNotReady := false
	for !sawNotReady {
		select {
		case err := <-started:
			t.Fatalf("the start ended (%v) before /status said not ready", err)
		default:
		}
		ready, msg := status(t, srv, "/status")
		if !ready {
			sawNotReady = true
			t.Logf("while starting: %q", msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
	assert.NilError(t, <-started)
	ready, _ = status(t, srv, "/status")
	assert.Assert(t, ready, "started")

	d.Kill()
	ready, _ = status(t, srv, "/status")
	assert.Assert(t, ready, "dead: a new session restarts it")
	d.Close()
	ready, _ = status(t, srv, "/status")
	assert.Assert(t, !ready, "closed")
}
