package wpt

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"gotest.tools/v3/assert"
)

// A WebDriver endpoint that creates no session stops the run before the
// first test, with ErrSession: no CRASH results, no progress lines.
func TestRunnerStopsWhenNoSession(t *testing.T) {
	wd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"value":{"error":"session not created","message":"session not created: Chrome failed to start: exited normally.\n  (The process started from chrome location /usr/bin/chromium is no longer running)","stacktrace":""}}`)
	}))
	defer wd.Close()
	srv := newTestServer(t, map[string]string{"a.html": ""})
	done := 0
	r := &Runner{WebDriver: wd.URL, Server: srv, Done: func(Result) { done++ }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	results, err := r.Run(context.Background(), []Test{{URL: "/a.html", File: "a.html"}, {URL: "/b.html", File: "b.html"}})
	assert.Assert(t, errors.Is(err, ErrSession), "%v", err)
	assert.Equal(t, err.Error(), "cannot create a WebDriver session: session not created: Chrome failed to start: exited normally. (The process started from chrome location /usr/bin/chromium is no longer running)")
	assert.Equal(t, len(results), 0)
	assert.Equal(t, done, 0)
	assert.Assert(t, errors.Is(r.Start(), ErrSession))
	r.Close()
}

// A test that did not pass says which Python handlers it asked for that
// wdext answered 501; one that passed says nothing of them.
func TestWithUnsupported(t *testing.T) {
	failed := Result{Status: StatusOK, Message: "", Subtests: []SubtestResult{{Status: StatusFail}}}
	assert.Equal(t, withUnsupported(failed, []string{"/b.py", "/a.py", "/b.py"}),
		"wdext does not run the Python handler(s) /a.py, /b.py (answered 501)")
	errored := Result{Status: StatusError, Message: "boom"}
	assert.Equal(t, withUnsupported(errored, []string{"/a.py"}), "boom; wdext does not run the Python handler(s) /a.py (answered 501)")
	passed := Result{Status: StatusOK, Subtests: []SubtestResult{{Status: StatusPass}}}
	assert.Equal(t, withUnsupported(passed, []string{"/a.py"}), "")
	assert.Equal(t, withUnsupported(errored, nil), "boom")
}
