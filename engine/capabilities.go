package engine

import (
	"context"
	"encoding/json"

	"github.com/wdext/wdext/memory/heap"
	"github.com/wdext/wdext/wire"
)

// Sampler forces a sample in every started profiler of the session (JS
// Self-Profiling's Force Sample).
type Sampler interface {
	ForceSample(ctx context.Context) error
}

// MemoryMeasurer measures the memory of the session's current top-level
// browsing context as the Measure Memory API does; source is
// wire.SourceAPI, wire.SourceEngine or "" for the engine's default.
type MemoryMeasurer interface {
	MeasureMemory(ctx context.Context, source string) (wire.MemoryMeasurement, error)
}

// GarbageCollector runs a full garbage collection in every heap of the
// current top-level browsing context.
type GarbageCollector interface {
	CollectGarbage(ctx context.Context) (*wire.GCResult, error)
}

// HeapSource lists the heaps of the current top-level browsing context,
// one per isolate (VM): the page's first, then, when all, those of its
// out-of-process frames and workers.
type HeapSource interface {
	Heaps(ctx context.Context, all bool) ([]Heap, error)
}

// Heap is one heap a HeapSource lists.
type Heap struct {
	Type string // "page", "iframe" or "worker"
	URL  string
	ID   string // the engine's id of the target, if it has one
	// Err says why the heap cannot be read (it went away); Snapshot is
	// nil then.
	Err error
	// Snapshot takes a heap snapshot (after a garbage collection).
	Snapshot func(ctx context.Context) (heap.Heap, error)
	// Census, if set, counts the heap in the engine itself, by the
	// client's breakdown as given (absent: the default): an engine whose
	// Debugger.Memory is native runs its own takeCensus. Snapshot is then
	// nil.
	Census func(ctx context.Context, breakdown json.RawMessage) (any, error)
}

// AllocationSampler samples the current page's allocations, for
// Debugger.Memory's allocation log.
type AllocationSampler interface {
	// SamplingInterval is the engine's rate for allocationSamplingProbability
	// p: 0 samples nothing; equal intervals need no restart.
	SamplingInterval(p float64) float64
	// SampleAllocations starts sampling at interval.
	SampleAllocations(ctx context.Context, interval float64) (AllocationSampling, error)
}

// AllocationSampling is a running allocation sampler.
type AllocationSampling interface {
	// Take returns what was sampled since the last Take, oldest first, and
	// how many entries more the engine sampled but did not keep (its own
	// log overflowed; at least 1 when it does not know how many); then it
	// samples on at interval.
	Take(ctx context.Context, interval float64) (entries []wire.AllocationEntry, dropped int, err error)
	// Interval is the current sampling interval (0: not sampling).
	Interval() float64
	// Stop stops sampling, dropping what was not taken.
	Stop(ctx context.Context) error
}

// GCLogger records the browser's garbage collections while on.
type GCLogger interface {
	// CollectGCs turns the log on or off and says whether it is on.
	CollectGCs(ctx context.Context, collect bool) (bool, error)
	// GCs returns what was logged since the last call.
	GCs(ctx context.Context) (wire.GCLog, error)
}

// LiveObjectTracker tells which objects were allocated between a start
// and a stop and are still alive (WebKit's live object profiler).
type LiveObjectTracker interface {
	StartLiveObjects(ctx context.Context) (LiveObjectTracking, error)
}

// LiveObjectTracking is a tracking under way.
type LiveObjectTracking interface {
	Stop(ctx context.Context) (wire.LiveObjects, error)
}

// LeakTracker runs a leak check (package memory/leaks) in the current
// page: StartLeaks collects garbage, keeps a baseline of the heap and,
// where the engine can, starts recording allocation sites; the tracking's
// Stop compares the heap after the client's iterations with the baseline.
type LeakTracker interface {
	StartLeaks(ctx context.Context) (LeakTracking, error)
}

// LeakTracking is a leak check under way.
type LeakTracking interface {
	// Stop ends the check (whatever its outcome) and returns the verdict
	// for the number of iterations the client ran.
	Stop(ctx context.Context, iterations int) (wire.LeakReport, error)
}

// IterationMarker is a LeakTracking or AllLeakTracking that can note
// where each iteration ended (leaks/iteration), so that the verdict
// tells the iterations' new objects apart exactly; a check that cannot
// is judged without the marks.
type IterationMarker interface {
	MarkIteration(ctx context.Context) error
}

// AllLeakTracker runs a leak check in each isolate of the current page:
// the page's, and those of its out-of-process frames and workers, as a
// LeakTracker does in the page's.
type AllLeakTracker interface {
	StartAllLeaks(ctx context.Context) (AllLeakTracking, error)
}

// AllLeakTracking is a leak check of every isolate under way.
type AllLeakTracking interface {
	// Stop ends every isolate's check and returns their verdicts: a frame
	// or worker that failed (it went away) has an Error, the page's
	// failure fails the whole.
	Stop(ctx context.Context, iterations int) (wire.AllLeaks, error)
}

// The capabilities, named for messages.
var (
	ForceSample   = Capability[Sampler]{"forcesample"}
	MeasureMemory = Capability[MemoryMeasurer]{"memory/measure"}
	GC            = Capability[GarbageCollector]{"memory/gc"}
	Census        = Capability[HeapSource]{"memory/census"}
	AllocationLog = Capability[AllocationSampler]{"the allocation log"}
	GCLog         = Capability[GCLogger]{"the GC log"}
	LiveObjects   = Capability[LiveObjectTracker]{"live object tracking"}
	Leaks         = Capability[LeakTracker]{"the leak check"}
	AllLeaks      = Capability[AllLeakTracker]{`the leak check of "targets": "all"`}
)
