package firefox

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/wire"
)

//go:embed debugger.js
var debuggerScript string

// debugger runs op of debugger.js (SpiderMonkey's Debugger.Memory in the
// page's content process) and decodes its answer into v.
func (e *Engine) debugger(ctx context.Context, op string, arg, v any) error {
	raw, err := e.system(ctx, "Debugger.Memory in Firefox's content process", debuggerScript, op, arg)
	if err != nil {
		return err
	}
	var answer string // debugger.js answers JSON in a string
	if err := json.Unmarshal(raw, &answer); err != nil {
		return err
	}
	return json.Unmarshal([]byte(answer), v)
}

// SamplingInterval is p itself: SpiderMonkey samples allocations by
// probability (allocationSamplingProbability), natively.
func (e *Engine) SamplingInterval(p float64) float64 { return p }

// SampleAllocations turns trackingAllocationSites on at probability p.
func (e *Engine) SampleAllocations(ctx context.Context, p float64) (engine.AllocationSampling, error) {
	var r struct{}
	if err := e.debugger(ctx, "track", p, &r); err != nil {
		return nil, err
	}
	return &allocationLog{e: e, p: p}, nil
}

// allocationLog is SpiderMonkey's allocation log of the session's page.
type allocationLog struct {
	e *Engine
	p float64
}

// Take drains the log (drainAllocationsLog) and samples on at p. A page
// that moved to another content process (a cross-site navigation) has a
// log of its own, which tracking starts afresh: what the old process
// logged since the last Take is lost.
func (a *allocationLog) Take(ctx context.Context, p float64) ([]wire.AllocationEntry, error) {
	var r drained
	if err := a.e.debugger(ctx, "drain", p, &r); err != nil {
		return nil, err
	}
	prob := a.p
	a.p = p
	return r.entries(prob)
}

// drained is debugger.js's log, by columns: each stack once, and per
// entry its timestamp, stack index (-1: none), class, size and inNursery
// (SpiderMonkey's entries carry no constructor: it stays null).
type drained struct {
	Stacks    [][]wire.Frame `json:"stacks"`
	Timestamp []float64      `json:"timestamp"`
	Stack     []int          `json:"stack"`
	Class     []string       `json:"class"`
	Size      []int64        `json:"size"`
	InNursery []bool         `json:"inNursery"`
}

// entries expands the log, logged at probability p: an entry stands for
// size/p bytes.
func (d drained) entries(p float64) ([]wire.AllocationEntry, error) {
	n := len(d.Timestamp)
	if len(d.Stack) != n || len(d.Class) != n || len(d.Size) != n || len(d.InNursery) != n {
		return nil, fmt.Errorf("allocation log: columns of different lengths")
	}
	out := make([]wire.AllocationEntry, n)
	for i := range out {
		e := &out[i]
		e.Timestamp, e.Class, e.Size, e.InNursery = &d.Timestamp[i], &d.Class[i], &d.Size[i], &d.InNursery[i]
		if s := d.Stack[i]; s >= 0 && s < len(d.Stacks) && len(d.Stacks[s]) > 0 {
			e.Stack = d.Stacks[s]
			e.Frame = &e.Stack[0]
		}
		if p > 0 {
			e.SampledBytes = int64(math.Round(float64(d.Size[i]) / p))
		}
	}
	return out, nil
}

func (a *allocationLog) Interval() float64 { return a.p }

// Stop turns trackingAllocationSites off.
func (a *allocationLog) Stop(ctx context.Context) error {
	var r struct{}
	return a.e.debugger(ctx, "untrack", nil, &r)
}

// CollectGCs sets or clears onGarbageCollection.
func (e *Engine) CollectGCs(ctx context.Context, collect bool) (bool, error) {
	var r struct {
		Collecting bool `json:"collecting"`
	}
	if err := e.debugger(ctx, "gclog", collect, &r); err != nil {
		return false, err
	}
	e.mu.Lock()
	e.collecting = r.Collecting
	e.mu.Unlock()
	return r.Collecting, nil
}

// gcStats is onGarbageCollection's statistics object.
type gcStats struct {
	Collections          []wire.GCSlice `json:"collections"`
	Reason               *string        `json:"reason"`
	NonincrementalReason *string        `json:"nonincrementalReason"`
	GCCycleNumber        int64          `json:"gcCycleNumber"`
}

// GCs returns what onGarbageCollection reported since the last call:
// SpiderMonkey's major collections of the page's zone group (it reports
// no minor ones). A page in a new content process has a log of its own,
// off until collecting is asked for again: Stopped says so.
func (e *Engine) GCs(ctx context.Context) (wire.GCLog, error) {
	var r struct {
		Fresh      bool      `json:"fresh"`
		Collecting bool      `json:"collecting"`
		Pid        int64     `json:"pid"`
		GCs        []gcStats `json:"gcs"`
	}
	if err := e.debugger(ctx, "gcs", nil, &r); err != nil {
		return wire.GCLog{}, err
	}
	out := wire.GCLog{Collecting: r.Collecting, Entries: []wire.GCEntry{}}
	e.mu.Lock()
	lost := e.collecting && !r.Collecting
	e.collecting = r.Collecting
	e.mu.Unlock()
	if lost {
		out.Stopped = "the page is in another content process than when collecting started (a cross-site navigation); ask for collecting again"
	}
	for _, s := range r.GCs {
		out.Entries = append(out.Entries, wire.GCEntry{
			Collections: s.Collections, Reason: s.Reason, NonincrementalReason: s.NonincrementalReason,
			GCCycleNumber: s.GCCycleNumber, Collector: "major", Pid: r.Pid, Process: "content", Thread: "main",
		})
	}
	return out, nil
}

// Heaps is the page's heap, counted by SpiderMonkey's own takeCensus in
// its content process (cross-site frames, in processes of their own, and
// workers are not reached: the list is the page's heap, all or not).
func (e *Engine) Heaps(ctx context.Context, _ bool) ([]engine.Heap, error) {
	url, err := engine.CurrentURL(ctx, e.driver)
	if err != nil {
		return nil, err
	}
	return []engine.Heap{{Type: "page", URL: url, Census: e.census}}, nil
}

// census runs takeCensus with breakdown (absent: the default).
func (e *Engine) census(ctx context.Context, breakdown json.RawMessage) (any, error) {
	var arg any
	if len(breakdown) > 0 {
		arg = breakdown
	}
	var r struct {
		Census json.RawMessage `json:"census"`
	}
	if err := e.debugger(ctx, "census", arg, &r); err != nil {
		return nil, err
	}
	return r.Census, nil
}
