package wdclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/wire"
)

// An action that fails ends the check (a stop the server can take) and
// comes back as it is; bad counts send nothing.
func TestCheckLeaksActionFails(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, r.URL.Path+" "+string(body))
		wire.WriteValue(w, wire.LeakReport{Iterations: 1, Leaks: []wire.Leak{{Kind: wire.LeakObjects, Name: "Foo"}}})
	}))
	defer srv.Close()
	c := &Client{URL: srv.URL + "/"}
	boom := errors.New("boom")
	runs := 0
	_, err := c.CheckLeaks(context.Background(), "s1", func(context.Context) error {
		runs++
		if runs == 3 {
			return boom
		}
		return nil
	}, 5, 1)
	assert.Equal(t, err, boom)
	assert.DeepEqual(t, got, []string{
		"/session/s1/wdext/memory/leaks/start {}",
		"/session/s1/wdext/memory/leaks/iteration {}", // between the first iteration and the second, which failed
		`/session/s1/wdext/memory/leaks/stop {"iterations":1}`,
	})

	got = nil
	_, err = c.CheckLeaks(context.Background(), "s1", func(context.Context) error { return nil }, 0, 1)
	assert.ErrorContains(t, err, "iterations ≥ 1")
	assert.Assert(t, got == nil)
}

func TestLeakErrorLists(t *testing.T) {
	err := &LeakError{Report: wire.LeakReport{Iterations: 3, Leaks: []wire.Leak{
		{Kind: wire.LeakDetachedDOM, Name: "HTMLDivElement div", PerIteration: 2, CountDelta: 6, RetainedPerIteration: 400,
			RetainerPath: []string{"Window", "kept (property)", "Array"},
			CreatedFrom:  &wire.LeakFrame{URL: "http://a.test/app.js", Line: 3, Column: 9}},
		{Kind: wire.LeakObjects, Name: "Foo", PerIteration: 1, CountDelta: 3},
	}}}
	assert.Equal(t, err.Error(), "wdext: 2 leak group(s) over 3 iterations:\n"+
		"  detached-dom HTMLDivElement div: +2 per iteration (6 in all), retains 400 B per iteration; via Window → kept (property) → Array; created in (anonymous) http://a.test/app.js:3:9\n"+
		"  objects Foo: +1 per iteration (3 in all), retains 0 B per iteration")
}
