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
	"github.com/wdext/wdext/wire"
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

// Entries the engine sampled but could not keep (its own log overflowed)
// count as seen: the drain and the settings say the log overflowed,
// although fewer entries than maxAllocationsLogLength came.
func TestAllocationsDroppedByTheEngineOverflow(t *testing.T) {
	post := fakeEngineServer(t, droppingSampler{}, time.Minute)
	status, body := post("/session/s1/wdext/memory/allocations", `{"trackingAllocationSites": true, "maxAllocationsLogLength": 10}`)
	assert.Equal(t, status, 200, body)
	status, body = post("/session/s1/wdext/memory/allocations/drain", `{}`)
	assert.Equal(t, status, 200, body)
	assert.Assert(t, strings.Contains(body, `"overflowed":true`), body)
	assert.Equal(t, strings.Count(body, `"timestamp"`), 2, body)
	status, body = post("/session/s1/wdext/memory/allocations/drain", `{}`)
	assert.Equal(t, status, 200, body)
	assert.Assert(t, strings.Contains(body, `"overflowed":true`), "every Take drops one: %s", body)
}

// droppingSampler's every Take has two entries and says it dropped one.
type droppingSampler struct{}

func (droppingSampler) Name() string                       { return "dropping" }
func (droppingSampler) Close() error                       { return nil }
func (droppingSampler) SamplingInterval(p float64) float64 { return p }
func (droppingSampler) Interval() float64                  { return 1 }
func (droppingSampler) Stop(context.Context) error         { return nil }
func (d droppingSampler) SampleAllocations(context.Context, float64) (engine.AllocationSampling, error) {
	return d, nil
}
func (droppingSampler) Take(context.Context, float64) ([]wire.AllocationEntry, int, error) {
	at := 1.0
	return []wire.AllocationEntry{{Timestamp: &at}, {Timestamp: &at}}, 1, nil
}
