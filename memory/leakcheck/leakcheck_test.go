package leakcheck_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/memory/leakcheck"
	"github.com/wdext/wdext/wire"
)

// fakeServer serves the leak check in front of a fake driver whose one
// session, "s1", has engine e, and returns a function that posts a
// command to it.
func fakeServer(t *testing.T, e engine.Engine, commandTimeout time.Duration) func(path, body string) (int, string) {
	return e2e.FakeEngineServer(t, e, commandTimeout, leakcheck.Register)
}

// fakeLeaks is an engine whose leak check reports the iterations it was
// given, or, when hang, waits at the final snapshot for the deadline.
type fakeLeaks struct{ hang bool }

func (fakeLeaks) Name() string { return "fake" }
func (fakeLeaks) Close() error { return nil }
func (f fakeLeaks) StartLeaks(context.Context) (engine.LeakTracking, error) {
	return fakeTracking(f), nil
}

type fakeTracking fakeLeaks

func (f fakeTracking) Stop(ctx context.Context, n int) (wire.LeakReport, error) {
	if f.hang {
		<-ctx.Done()
		return wire.LeakReport{}, engine.Failed("leaks/stop: taking the final heap snapshot", ctx.Err())
	}
	return wire.LeakReport{Iterations: n, Leaks: []wire.Leak{}}, nil
}

const (
	startPath     = "/session/s1/wdext/memory/leaks/start"
	stopPath      = "/session/s1/wdext/memory/leaks/stop"
	iterationPath = "/session/s1/wdext/memory/leaks/iteration"
)

func TestCommands(t *testing.T) {
	post := fakeServer(t, fakeLeaks{}, 10*time.Second)
	expect := func(path, body string, status int, want ...string) {
		t.Helper()
		s, b := post(path, body)
		assert.Equal(t, s, status, "%s %s: %s", path, body, b)
		for _, w := range want {
			assert.Assert(t, strings.Contains(b, w), "%s %s: %s lacks %s", path, body, b, w)
		}
	}
	expect(stopPath, `{"iterations": 3}`, 400, `"invalid argument"`, "leaks/stop before leaks/start")
	expect(startPath, `{"targets": "frames"}`, 400, `"invalid argument"`)
	expect(startPath, `{"target": "page"}`, 400, `"invalid argument"`)
	// fakeLeaks checks the page only, and the check under way goes on.
	expect(startPath, `{"targets": "page"}`, 200, `{"value":null}`)
	expect(startPath, `{"targets": "all"}`, 500, `"unsupported operation"`, `the leak check of \"targets\": \"all\"`)
	expect(stopPath, `{"iterations": 2}`, 200, `"iterations":2`)
	expect(startPath, `{"targets": "page"}`, 200, `{"value":null}`)
	for _, bad := range []string{`{}`, `{"iterations": 0}`, `{"iterations": -2}`, `{"iterations": 1.5}`, `{"iterations": "3"}`, `{"iterations": null}`, `{"iterations": 3, "x": 1}`} {
		expect(stopPath, bad, 400, `"invalid argument"`)
	}
	// A bad stop keeps the check: the good one that follows ends it.
	expect(stopPath, `{"iterations": 3, "sessionId": "s1"}`, 200, `"iterations":3`, `"leaks":[]`)
	expect(stopPath, `{"iterations": 3}`, 400, "leaks/stop before leaks/start")
	// A second start replaces the first.
	expect(startPath, `{}`, 200)
	expect(startPath, `{}`, 200)
	expect(stopPath, `{"iterations": 7}`, 200, `"iterations":7`)

	// Iteration marks: only during a check, as many as the iterations
	// but one, or as many; fakeLeaks cannot use them and is judged
	// without.
	expect(iterationPath, `{}`, 400, `"invalid argument"`, "leaks/iteration before leaks/start")
	expect(startPath, `{}`, 200)
	expect(iterationPath, `{"x": 1}`, 400, `"invalid argument"`)
	for range 2 {
		expect(iterationPath, `{}`, 200, `{"value":null}`)
	}
	expect(stopPath, `{"iterations": 3}`, 200, `"iterations":3`)
	expect(startPath, `{}`, 200)
	expect(iterationPath, `{}`, 200)
	expect(stopPath, `{"iterations": 5}`, 400, `"invalid argument"`, "leaks/iteration marked 1", "the check goes on")
	expect(stopPath, `{"iterations": 2}`, 200, `"iterations":2`)
	expect(stopPath, `{"iterations": 2}`, 400, "leaks/stop before leaks/start")
}

// fakeAllLeaks also checks every isolate: a page and a worker that went
// away.
type fakeAllLeaks struct{ fakeLeaks }

func (fakeAllLeaks) StartAllLeaks(context.Context) (engine.AllLeakTracking, error) {
	return fakeAllTracking{}, nil
}

type fakeAllTracking struct{}

func (fakeAllTracking) Stop(_ context.Context, n int) (wire.AllLeaks, error) {
	return wire.AllLeaks{Iterations: n, Targets: []wire.TargetLeaks{
		{Type: "page", Report: &wire.LeakReport{Iterations: n, Leaks: []wire.Leak{}}},
		{Type: "worker", Error: "gone"},
	}}, nil
}

// "targets": "all" starts the engine's check of every isolate, and stop
// answers its verdicts; a page check after it answers one.
func TestAllTargets(t *testing.T) {
	post := fakeServer(t, fakeAllLeaks{}, 10*time.Second)
	s, b := post(startPath, `{"targets": "all"}`)
	assert.Equal(t, s, 200, b)
	s, b = post(stopPath, `{"iterations": 4}`)
	assert.Equal(t, s, 200, b)
	assert.Assert(t, strings.Contains(b, `{"value":{"iterations":4,"targets":[{"type":"page","url":"","targetId":"","report":{"iterations":4,`), b)
	assert.Assert(t, strings.Contains(b, `{"type":"worker","url":"","targetId":"","report":null,"error":"gone"}`), b)
	s, b = post(startPath, `{}`)
	assert.Equal(t, s, 200, b)
	s, b = post(stopPath, `{"iterations": 4}`)
	assert.Equal(t, s, 200, b)
	assert.Assert(t, strings.HasPrefix(b, `{"value":{"iterations":4,"bytesBefore"`), b)
}

// A stop that runs out of time is the W3C "timeout", naming the phase.
func TestStopTimeout(t *testing.T) {
	post := fakeServer(t, fakeLeaks{hang: true}, 100*time.Millisecond)
	s, b := post(startPath, `{}`)
	assert.Equal(t, s, 200, b)
	s, b = post(stopPath, `{"iterations": 2}`)
	assert.Equal(t, s, 500, b)
	assert.Assert(t, strings.Contains(b, `"error":"timeout"`), b)
	assert.Assert(t, strings.Contains(b, "taking the final heap snapshot"), b)
}

// An engine without the capability says so.
func TestUnsupported(t *testing.T) {
	post := fakeServer(t, engine.None("fake", "no leak check here"), 10*time.Second)
	s, b := post(startPath, `{}`)
	assert.Equal(t, s, 500, b)
	assert.Assert(t, strings.Contains(b, `"unsupported operation"`) && strings.Contains(b, "the leak check"), b)
}
