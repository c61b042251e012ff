package firefox

import (
	"context"
	_ "embed"
	"encoding/json"

	"github.com/wdext/wdext/memory/measurement"
	"github.com/wdext/wdext/wire"
)

//go:embed memory.js
var memoryScript string

// tabMemory is memory.js's answer: the page, and its tab's JavaScript
// bytes (sizeOfTab's objects, strings and the rest).
type tabMemory struct {
	URL, Origin   string
	Before, After uint64
}

// tabMemory runs op of memory.js in the page's content process.
func (e *Engine) tabMemory(ctx context.Context, op string) (tabMemory, error) {
	var m tabMemory
	raw, err := e.system(ctx, "Firefox's memory reporters", memoryScript, op)
	if err != nil {
		return m, err
	}
	err = json.Unmarshal(raw, &m)
	return m, err
}

// CollectGarbage runs a full collection (Cu.forceGC, forceCC, forceGC) in
// the page's content process. The sizes are the tab's JavaScript memory,
// before and after.
func (e *Engine) CollectGarbage(ctx context.Context) (*wire.GCResult, error) {
	m, err := e.tabMemory(ctx, "gc")
	if err != nil {
		return nil, err
	}
	return &wire.GCResult{Targets: []wire.GCTarget{{Type: "page", URL: m.URL, UsedBefore: m.Before, UsedAfter: m.After}}}, nil
}

// MeasureMemory measures the page from Firefox's memory reporters (source
// "engine", the default): one entry, the tab's JavaScript bytes in its
// content process, attributed to the top-level document (its same-process
// frames are lumped in it; frames of other sites, in processes of their
// own, and workers are not counted). Firefox has no
// measureUserAgentSpecificMemory, so source "api" is unsupported.
func (e *Engine) MeasureMemory(ctx context.Context, source string) (wire.MemoryMeasurement, error) {
	if source == wire.SourceAPI {
		return wire.MemoryMeasurement{}, wire.Errorf(wire.UnsupportedOperation,
			"source %q: Firefox has no performance.measureUserAgentSpecificMemory (the Measure Memory API): use source %q", wire.SourceAPI, wire.SourceEngine)
	}
	m, err := e.tabMemory(ctx, "measure")
	if err != nil {
		return wire.MemoryMeasurement{}, err
	}
	const process = "content"
	heaps := measurement.EngineHeaps{
		Frames: []measurement.EngineFrame{{ID: "top", URL: m.URL, Origin: m.Origin, Isolate: process}},
		Bytes:  map[string]uint64{process: m.After},
	}
	intermediate, err := heaps.Intermediate()
	if err != nil {
		return wire.MemoryMeasurement{}, err
	}
	out := measurement.CreateNewMemoryMeasurement(intermediate, nil)
	if err := measurement.Validate(out); err != nil {
		return out, wire.Errorf(wire.UnknownError, "the engine measurement breaks the spec's invariants: %v", err)
	}
	return out, nil
}
