package debuggermemory_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/memory/debuggermemory"
	"github.com/wdext/wdext/memory/heap"
)

// A census whose heap snapshot never comes (a page busy in a loop, a
// crashed tab) stops at the server's command deadline with the W3C
// "timeout", and the session stays usable.
func TestCensusHungSnapshotTimesOut(t *testing.T) {
	post := fakeEngineServer(t, hungHeaps{}, 100*time.Millisecond)
	for range 2 {
		status, body := post("/session/s1/wdext/memory/census", `{}`)
		assert.Equal(t, status, 500, body)
		assert.Assert(t, strings.Contains(body, `"error":"timeout"`), body)
	}
}

// fakeEngineServer serves wdext with the Debugger.Memory commands in front
// of a fake driver whose one session, "s1", has engine e, and returns a
// function that posts a command to it.
func fakeEngineServer(t *testing.T, e engine.Engine, commandTimeout time.Duration) func(path, body string) (int, string) {
	return e2e.FakeEngineServer(t, e, commandTimeout, debuggermemory.Register)
}

// hungHeaps lists one heap whose snapshot waits for its context's end.
type hungHeaps struct{}

func (hungHeaps) Name() string { return "hung" }
func (hungHeaps) Close() error { return nil }
func (hungHeaps) Heaps(context.Context, bool) ([]engine.Heap, error) {
	return []engine.Heap{{Type: "page", Snapshot: func(ctx context.Context) (heap.Heap, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}}, nil
}
