package firefox

import (
	"context"
	"strconv"

	"github.com/wdext/wdext/memory/measurement"
	"github.com/wdext/wdext/wire"
)

// tabPart is process.js's "tabs": the part of each tab that one content
// process holds.
type tabPart struct {
	Frames []struct {
		ID     int64  `json:"id"`
		Parent *int64 `json:"parent"`
		Top    int64  `json:"top"`
		URL    string `json:"url"`
		Origin string `json:"origin"`
	} `json:"frames"`
	Containers []struct {
		Frame int64 `json:"frame"` // the browsing context it holds
		measurement.ContainerElement
	} `json:"containers"`
	Roots []struct {
		ID     int64  `json:"id"`
		Top    int64  `json:"top"`
		URL    string `json:"url"`
		Before uint64 `json:"before"`
		After  uint64 `json:"after"`
	} `json:"roots"`
}

// tabs asks every content process for its part of the page's tab
// (Firefox's memory reporters' sizeOfTab, in each); collect runs a full
// collection in each between the two counts.
func (e *Engine) tabs(ctx context.Context, collect bool) (replies[tabPart], error) {
	r, err := ask[tabPart](ctx, e, "tabs", collect, "all")
	if err != nil {
		return r, err
	}
	for _, an := range r.Answers {
		if err := an.err(); err != nil {
			return r, err
		}
	}
	return r, nil
}

// CollectGarbage runs a full collection (Cu.forceGC, forceCC, forceGC) in
// every content process that holds a part of the page's tab: the page's
// process, and those of its frames of other sites. The sizes are each
// part's JavaScript memory, before and after; the page's comes first.
func (e *Engine) CollectGarbage(ctx context.Context) (*wire.GCResult, error) {
	r, err := e.tabs(ctx, true)
	if err != nil {
		return nil, err
	}
	out := &wire.GCResult{Targets: []wire.GCTarget{}}
	for _, an := range r.Answers {
		for _, root := range an.Value.Roots {
			if root.Top != r.Top {
				continue
			}
			t := wire.GCTarget{Type: "iframe", URL: root.URL, UsedBefore: root.Before, UsedAfter: root.After}
			if root.ID == r.Top {
				t.Type = "page"
				out.Targets = append([]wire.GCTarget{t}, out.Targets...)
				continue
			}
			out.Targets = append(out.Targets, t)
		}
	}
	return out, nil
}

// MeasureMemory measures the page's tab from Firefox's memory reporters
// (source "engine", the default): one entry per content process that holds
// a part of it, its JavaScript bytes, with that part's documents (the
// page and its same-site frames in one; a frame of another site in its
// own). Workers are not counted. Firefox has no
// measureUserAgentSpecificMemory, so source "api" is unsupported.
func (e *Engine) MeasureMemory(ctx context.Context, source string) (wire.MemoryMeasurement, error) {
	if source == wire.SourceAPI {
		return wire.MemoryMeasurement{}, wire.Errorf(wire.UnsupportedOperation,
			"source %q: Firefox has no performance.measureUserAgentSpecificMemory (the Measure Memory API): use source %q", wire.SourceAPI, wire.SourceEngine)
	}
	r, err := e.tabs(ctx, false)
	if err != nil {
		return wire.MemoryMeasurement{}, err
	}
	heaps := measurement.EngineHeaps{Bytes: map[string]uint64{}}
	containers := map[int64]*measurement.ContainerElement{}
	for _, an := range r.Answers {
		for _, c := range an.Value.Containers {
			containers[c.Frame] = &c.ContainerElement
		}
	}
	for _, an := range r.Answers {
		process := processID(an.Pid)
		for _, f := range an.Value.Frames {
			if f.Top != r.Top {
				continue
			}
			frame := measurement.EngineFrame{ID: strconv.FormatInt(f.ID, 10), URL: f.URL, Origin: f.Origin, Isolate: process, Container: containers[f.ID]}
			if f.Parent != nil {
				frame.ParentID = strconv.FormatInt(*f.Parent, 10)
			}
			heaps.Frames = append(heaps.Frames, frame)
		}
		for _, root := range an.Value.Roots {
			if root.Top == r.Top {
				heaps.Bytes[process] += root.After
			}
		}
	}
	intermediate, err := heaps.Intermediate()
	if err != nil {
		return wire.MemoryMeasurement{}, wire.Errorf(wire.UnknownError, "the page's frames: %v", err)
	}
	out := measurement.CreateNewMemoryMeasurement(intermediate, nil)
	if err := measurement.Validate(out); err != nil {
		return out, wire.Errorf(wire.UnknownError, "the engine measurement breaks the spec's invariants: %v", err)
	}
	return out, nil
}
