package debuggermemory_test

import (
	"context"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/memory/heap"
	"github.com/wdext/wdext/wire"
)

// A census of all targets whose session ends under it (an engine answers
// "invalid session id" for a later target) answers "invalid session id",
// not a census with that target's entry marked as gone.
func TestCensusAllStopsWhenSessionEnds(t *testing.T) {
	post := fakeEngineServer(t, endingHeaps{}, 0)
	status, body := post("/session/s1/wdext/memory/census", `{"targets": "all"}`)
	assert.Equal(t, status, 404, body)
	assert.Assert(t, strings.Contains(body, `"error":"invalid session id"`), body)
}

// endingHeaps lists a page that counts and a worker whose snapshot finds
// the session ended.
type endingHeaps struct{}

func (endingHeaps) Name() string { return "ending" }
func (endingHeaps) Close() error { return nil }
func (endingHeaps) Heaps(context.Context, bool) ([]engine.Heap, error) {
	return []engine.Heap{
		{Type: "page", Snapshot: func(context.Context) (heap.Heap, error) { return emptyHeap{}, nil }},
		{Type: "worker", Snapshot: func(context.Context) (heap.Heap, error) {
			return nil, wire.Errorf(wire.InvalidSessionID, "the session ended while the command ran")
		}},
	}, nil
}

// emptyHeap is a heap with no nodes.
type emptyHeap struct{}

func (emptyHeap) NodeCount() int                    { return 0 }
func (emptyHeap) Kinds() []heap.Kind                { return nil }
func (emptyHeap) Nodes(int, []heap.Node)            {}
func (emptyHeap) ClassName(int) (string, bool)      { return "", false }
func (emptyHeap) Stack(uint32) ([]wire.Frame, bool) { return nil, false }
