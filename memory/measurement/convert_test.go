package measurement

import (
	"math/rand/v2"
	"testing"

	"github.com/wdext/wdext/wire"
	"gotest.tools/v3/assert"
)

func TestCreateNewMemoryMeasurementOrder(t *testing.T) {
	// Without shuffling, the empty entry comes first (step 4), then the
	// entries in order (step 5).
	got := CreateNewMemoryMeasurement([]IntermediateMemoryBreakdownEntry{
		entry(10, realms(top), "JS"),
		entry(20, realms(worker), "JS"),
	}, noShuffle{})
	assert.DeepEqual(t, got, wire.MemoryMeasurement{Bytes: 30, Breakdown: []wire.MemoryBreakdownEntry{
		{Attribution: []wire.MemoryAttribution{}, Types: []string{}},
		{Bytes: 10, Attribution: []wire.MemoryAttribution{{URL: exampleCom, Scope: wire.ScopeWindow}}, Types: []string{"JS"}},
		{Bytes: 20, Attribution: []wire.MemoryAttribution{{URL: exampleCom + "/worker.js", Scope: wire.ScopeDedicatedWorker}}, Types: []string{"JS"}},
	}})
}

func TestCreateNewMemoryMeasurementEmptyEntryPosition(t *testing.T) {
	// Step 6: the empty entry can land anywhere, and the source decides.
	intermediate := []IntermediateMemoryBreakdownEntry{
		entry(10, realms(top), "JS"),
		entry(20, realms(worker), "JS"),
	}
	seen := map[int]bool{}
	for seed := range uint64(64) {
		m := CreateNewMemoryMeasurement(intermediate, rand.New(rand.NewPCG(seed, 0)))
		assert.NilError(t, Validate(m))
		again := CreateNewMemoryMeasurement(intermediate, rand.New(rand.NewPCG(seed, 0)))
		assert.DeepEqual(t, m, again)
		for i, e := range m.Breakdown {
			if e.IsEmpty() {
				seen[i] = true
			}
		}
	}
	assert.DeepEqual(t, seen, map[int]bool{0: true, 1: true, 2: true})

	// A nil source still yields a valid result.
	assert.NilError(t, Validate(CreateNewMemoryMeasurement(intermediate, nil)))
}

func TestCreateNewMemoryMeasurementEmpty(t *testing.T) {
	// The algorithm inserts the empty entry even with nothing measured.
	got := CreateNewMemoryMeasurement(nil, noShuffle{})
	assert.DeepEqual(t, got, wire.MemoryMeasurement{Breakdown: []wire.MemoryBreakdownEntry{{Attribution: []wire.MemoryAttribution{}, Types: []string{}}}})
	assert.NilError(t, Validate(got))
}

func TestCreateNewMemoryMeasurementMerge(t *testing.T) {
	got := CreateNewMemoryMeasurement([]IntermediateMemoryBreakdownEntry{
		entry(1, realms(fooIframe1), "JS", "DOM"),
		entry(2, realms(fooWorker), "DOM", "JS"),        // same attribution and types as sets
		entry(4, realms(fooIframe2), "JS"),              // other types
		entry(8, realms(top, fooIframe1), "JS", "DOM"),  // other attribution
		entry(16, realms(fooIframe1, top), "DOM", "JS"), // same as the previous, reordered
		entry(32, realms(fooIframe1, barIframe2), "JS"), // two realms, one attribution
		entry(64, realms(top), "JS", "JS"),              // repeated type
	}, noShuffle{})
	coa := wire.MemoryAttribution{URL: wire.CrossOriginURL, Container: &wire.MemoryAttributionContainer{ID: "example-id", Src: fooCom + "/iframe1"}, Scope: wire.ScopeCrossOriginAggregated}
	win := wire.MemoryAttribution{URL: exampleCom, Scope: wire.ScopeWindow}
	assert.DeepEqual(t, got, wire.MemoryMeasurement{Bytes: 127, Breakdown: []wire.MemoryBreakdownEntry{
		{Attribution: []wire.MemoryAttribution{}, Types: []string{}},
		{Bytes: 3, Attribution: []wire.MemoryAttribution{coa}, Types: []string{"JS", "DOM"}},
		{Bytes: 36, Attribution: []wire.MemoryAttribution{coa}, Types: []string{"JS"}},
		{Bytes: 24, Attribution: []wire.MemoryAttribution{win, coa}, Types: []string{"JS", "DOM"}},
		{Bytes: 64, Attribution: []wire.MemoryAttribution{win}, Types: []string{"JS"}},
	}})
}
