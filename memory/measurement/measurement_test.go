package measurement

import (
	"encoding/json"
	"testing"

	"github.com/wdext/wdext/wire"
	"gotest.tools/v3/assert"
)

// chromium is shaped like what Chromium's
// performance.measureUserAgentSpecificMemory() resolves to for a page with a
// same-origin iframe, a worker and a cross-origin iframe.
const chromium = `{"bytes":3145728,"breakdown":[` +
	`{"bytes":1048576,"attribution":[{"url":"https://example.com/","scope":"Window"}],"types":["JavaScript"]},` +
	`{"bytes":0,"attribution":[],"types":[]},` +
	`{"bytes":524288,"attribution":[{"url":"https://example.com/frame.html","container":{"id":"same","src":"frame.html"},"scope":"Window"}],"types":["DOM","JavaScript"]},` +
	`{"bytes":524288,"attribution":[{"url":"https://example.com/worker.js","scope":"DedicatedWorkerGlobalScope"}],"types":["JavaScript"]},` +
	`{"bytes":1048576,"attribution":[{"url":"cross-origin-url","container":{"id":"","src":"https://foo.com/"},"scope":"cross-origin-aggregated"}],"types":["JavaScript"]},` +
	`{"bytes":0,"attribution":[{"url":"https://example.com/","scope":"Window"},{"url":"https://example.com/frame.html","container":{"id":"same","src":"frame.html"},"scope":"Window"}],"types":["Shared"]}` +
	`]}`

func TestJSONRoundTrip(t *testing.T) {
	page := wire.MemoryAttribution{URL: "https://example.com/", Scope: wire.ScopeWindow}
	frame := wire.MemoryAttribution{URL: "https://example.com/frame.html", Container: &wire.MemoryAttributionContainer{ID: "same", Src: "frame.html"}, Scope: wire.ScopeWindow}
	want := wire.MemoryMeasurement{Bytes: 3 << 20, Breakdown: []wire.MemoryBreakdownEntry{
		{Bytes: 1 << 20, Attribution: []wire.MemoryAttribution{page}, Types: []string{"JavaScript"}},
		{Attribution: []wire.MemoryAttribution{}, Types: []string{}},
		{Bytes: 512 << 10, Attribution: []wire.MemoryAttribution{frame}, Types: []string{"DOM", "JavaScript"}},
		{Bytes: 512 << 10, Attribution: []wire.MemoryAttribution{{URL: "https://example.com/worker.js", Scope: wire.ScopeDedicatedWorker}}, Types: []string{"JavaScript"}},
		{Bytes: 1 << 20, Attribution: []wire.MemoryAttribution{{
			URL: wire.CrossOriginURL, Container: &wire.MemoryAttributionContainer{Src: "https://foo.com/"}, Scope: wire.ScopeCrossOriginAggregated,
		}}, Types: []string{"JavaScript"}},
		{Attribution: []wire.MemoryAttribution{page, frame}, Types: []string{"Shared"}},
	}}

	var got wire.MemoryMeasurement
	assert.NilError(t, json.Unmarshal([]byte(chromium), &got))
	assert.DeepEqual(t, got, want)
	assert.NilError(t, Validate(got))

	b, err := json.Marshal(got)
	assert.NilError(t, err)
	assert.Equal(t, string(b), chromium)
}

func TestJSONNilListsAreArrays(t *testing.T) {
	// Browsers never send null lists; pages iterate them unchecked.
	for _, tc := range []struct {
		v    any
		want string
	}{
		{wire.MemoryMeasurement{Bytes: 7}, `{"bytes":7,"breakdown":[]}`},
		{&wire.MemoryMeasurement{Breakdown: []wire.MemoryBreakdownEntry{{}}}, `{"bytes":0,"breakdown":[{"bytes":0,"attribution":[],"types":[]}]}`},
		{wire.MemoryAttribution{URL: "u", Scope: wire.ScopeWindow}, `{"url":"u","scope":"Window"}`},
		{wire.MemoryAttribution{URL: "u", Container: &wire.MemoryAttributionContainer{}, Scope: wire.ScopeWindow}, `{"url":"u","container":{"id":"","src":""},"scope":"Window"}`},
	} {
		b, err := json.Marshal(tc.v)
		assert.NilError(t, err)
		assert.Equal(t, string(b), tc.want)
	}
}
