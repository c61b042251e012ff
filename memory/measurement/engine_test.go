package measurement

import (
	"testing"

	"github.com/wdext/wdext/wire"
	"gotest.tools/v3/assert"
)

// The spec's cross-origin example as an engine would see it: foo.com's
// iframe1 and iframe2 share a process (one isolate), bar.com and the
// worker have their own. Every cross-origin isolate aggregates to the
// top-most cross-origin container, and the entries merge: 1,400,000 bytes.
func TestEngineHeapsCrossOriginExample(t *testing.T) {
	iframe := &ContainerElement{LocalName: "iframe", ID: "example-id", Src: "https://foo.com/iframe1"}
	h := EngineHeaps{
		Frames: []EngineFrame{
			{ID: "top", URL: "https://example.com", Origin: "https://example.com", Isolate: "example"},
			{ID: "f1", ParentID: "top", URL: "https://foo.com/iframe1", Origin: "https://foo.com", Isolate: "foo", Container: iframe},
			{ID: "f2", ParentID: "f1", URL: "https://foo.com/iframe2", Origin: "https://foo.com", Isolate: "foo",
				Container: &ContainerElement{LocalName: "iframe", ID: "secret", Src: "iframe2"}},
			{ID: "b2", ParentID: "f1", URL: "https://bar.com/iframe2", Origin: "https://bar.com", Isolate: "bar"},
		},
		Workers: []EngineWorker{{URL: "https://foo.com/worker.js", Global: wire.ScopeDedicatedWorker, Frame: "f1", Isolate: "worker"}},
		Bytes:   map[string]uint64{"example": 1_000_000, "foo": 700_000, "bar": 300_000, "worker": 400_000},
	}
	in, err := h.Intermediate()
	assert.NilError(t, err)
	assert.Equal(t, len(in), 4)
	got := CreateNewMemoryMeasurement(in, noShuffle{})
	assert.NilError(t, Validate(got))
	aggregated := wire.MemoryAttribution{URL: wire.CrossOriginURL, Container: &wire.MemoryAttributionContainer{ID: "example-id", Src: "https://foo.com/iframe1"}, Scope: wire.ScopeCrossOriginAggregated}
	assert.DeepEqual(t, got, wire.MemoryMeasurement{
		Bytes: 2_400_000,
		Breakdown: []wire.MemoryBreakdownEntry{
			{Attribution: []wire.MemoryAttribution{}, Types: []string{}},
			{Bytes: 1_000_000, Attribution: []wire.MemoryAttribution{{URL: "https://example.com", Scope: wire.ScopeWindow}}, Types: []string{TypeJavaScript}},
			{Bytes: 1_400_000, Attribution: []wire.MemoryAttribution{aggregated}, Types: []string{TypeJavaScript}},
		},
	})
}

// The spec's example.com/iframe2 example: the nested top-origin frame
// shares the top's isolate (as in Chromium, where it shares the process),
// so it is lumped with the top and revealed under the cross-origin
// iframe's container.
func TestEngineHeapsSameOriginInCrossOrigin(t *testing.T) {
	h := EngineHeaps{
		Frames: []EngineFrame{
			{ID: "top", URL: "https://example.com", Origin: "https://example.com", Isolate: "example"},
			{ID: "f1", ParentID: "top", URL: "https://foo.com/iframe1", Origin: "https://foo.com", Isolate: "foo",
				Container: &ContainerElement{LocalName: "iframe", ID: "example-id", Src: "https://foo.com/iframe1"}},
			{ID: "e2", ParentID: "f1", URL: "https://example.com/iframe2", Origin: "https://example.com", Isolate: "example",
				Container: &ContainerElement{LocalName: "iframe", ID: "inner", Src: "https://example.com/iframe2"}},
		},
		Bytes: map[string]uint64{"example": 1_200_000, "foo": 500_000},
	}
	in, err := h.Intermediate()
	assert.NilError(t, err)
	got := CreateNewMemoryMeasurement(in, noShuffle{})
	assert.NilError(t, Validate(got))
	c := &wire.MemoryAttributionContainer{ID: "example-id", Src: "https://foo.com/iframe1"}
	assert.DeepEqual(t, got, wire.MemoryMeasurement{
		Bytes: 1_700_000,
		Breakdown: []wire.MemoryBreakdownEntry{
			{Attribution: []wire.MemoryAttribution{}, Types: []string{}},
			{Bytes: 1_200_000, Attribution: []wire.MemoryAttribution{
				{URL: "https://example.com", Scope: wire.ScopeWindow},
				{URL: "https://example.com/iframe2", Container: c, Scope: wire.ScopeWindow},
			}, Types: []string{TypeJavaScript}},
			{Bytes: 500_000, Attribution: []wire.MemoryAttribution{{URL: wire.CrossOriginURL, Container: c, Scope: wire.ScopeCrossOriginAggregated}}, Types: []string{TypeJavaScript}},
		},
	})
}

// A worker whose frame is gone is the page's; an object element reports
// its data attribute; a frame whose owner is unknown gets an empty
// container rather than passing for top-level.
func TestEngineHeapsEdges(t *testing.T) {
	h := EngineHeaps{
		Frames: []EngineFrame{
			{ID: "top", URL: "https://a.test/", Origin: "https://a.test", Isolate: "a"},
			{ID: "o", ParentID: "top", URL: "https://a.test/o", Origin: "https://a.test", Isolate: "a",
				Container: &ContainerElement{LocalName: "object", ID: "obj", Src: "ignored", Data: "o"}},
			{ID: "x", ParentID: "top", URL: "https://b.test/", Origin: "https://b.test", Isolate: "b"},
		},
		Workers: []EngineWorker{{URL: "https://a.test/w.js", Global: wire.ScopeDedicatedWorker, Frame: "gone", Isolate: "w"}},
		Bytes:   map[string]uint64{"a": 3, "b": 5, "w": 7},
	}
	in, err := h.Intermediate()
	assert.NilError(t, err)
	got := CreateNewMemoryMeasurement(in, noShuffle{})
	assert.NilError(t, Validate(got))
	assert.DeepEqual(t, got.Breakdown[1:], []wire.MemoryBreakdownEntry{
		{Bytes: 3, Attribution: []wire.MemoryAttribution{
			{URL: "https://a.test/", Scope: wire.ScopeWindow},
			{URL: "https://a.test/o", Container: &wire.MemoryAttributionContainer{ID: "obj", Src: "o"}, Scope: wire.ScopeWindow},
		}, Types: []string{TypeJavaScript}},
		{Bytes: 5, Attribution: []wire.MemoryAttribution{{URL: wire.CrossOriginURL, Container: &wire.MemoryAttributionContainer{}, Scope: wire.ScopeCrossOriginAggregated}}, Types: []string{TypeJavaScript}},
		{Bytes: 7, Attribution: []wire.MemoryAttribution{{URL: "https://a.test/w.js", Scope: wire.ScopeDedicatedWorker}}, Types: []string{TypeJavaScript}},
	})
}

func TestEngineHeapsErrors(t *testing.T) {
	for name, h := range map[string]EngineHeaps{
		"no top":         {Frames: []EngineFrame{{ID: "a", ParentID: "b"}, {ID: "b", ParentID: "a"}}},
		"two tops":       {Frames: []EngineFrame{{ID: "a"}, {ID: "b"}}},
		"missing parent": {Frames: []EngineFrame{{ID: "a"}, {ID: "b", ParentID: "c"}}},
		"empty":          {},
	} {
		_, err := h.Intermediate()
		assert.Assert(t, err != nil, name)
	}
}
