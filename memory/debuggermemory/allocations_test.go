package debuggermemory_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/wire"
)

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
