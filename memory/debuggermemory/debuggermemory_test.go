package debuggermemory

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/wire"
)

// The log keeps the newest maxAllocationsLogLength entries.
func TestLogKeepsNewest(t *testing.T) {
	a := allocLog{maxLen: 3}
	for i := range 5 {
		a.log = append(a.log, wire.AllocationEntry{SampledBytes: int64(i)})
		a.seen++
	}
	a.trim()
	assert.Equal(t, len(a.log), 3)
	assert.Equal(t, a.log[0].SampledBytes, int64(2))
	assert.Equal(t, a.log[2].SampledBytes, int64(4))
	assert.Assert(t, a.settings().AllocationsLogOverflowed)
}

func TestDecodeStrict(t *testing.T) {
	var args wire.AllocationArgs
	known := []string{"trackingAllocationSites", "allocationSamplingProbability", "maxAllocationsLogLength"}
	assert.NilError(t, decodeStrict(nil, &args, known...))
	assert.NilError(t, decodeStrict([]byte(`{"trackingAllocationSites":true}`), &args, known...))
	assert.Equal(t, *args.TrackingAllocationSites, true)
	for body, want := range map[string]string{
		`{"trackingAllocationSite":true}`:   `unknown parameter "trackingAllocationSite"`,
		`{"trackingAllocationSites":"yes"}`: "trackingAllocationSites",
		`[1]`:                               "JSON object",
	} {
		err := decodeStrict([]byte(body), &args, known...)
		we := wire.AsError(err)
		assert.Equal(t, we.Code, wire.InvalidArgument)
		assert.Assert(t, strings.Contains(we.Message, want), "%s: %s", body, we.Message)
	}
}
