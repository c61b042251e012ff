package firefox

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/wire"
)

//go:embed debugger.js
var debuggerScript string

// settings are the session's memory settings, which every content
// process follows (process.js).
type settings struct {
	Track bool    `json:"track"`
	P     float64 `json:"p"`
	Live  bool    `json:"live"` // live objects are tracked (at probability 1)
	GCLog bool    `json:"gclog"`
}

// answer is one content process's answer to an operation of process.js,
// whose value is a T.
type answer[T any] struct {
	Pid        int64  `json:"pid"`
	RemoteType string `json:"remoteType"`
	Value      T      `json:"value"`
	Error      string `json:"error"`
}

// err is the process's failure, if it failed.
func (a answer[T]) err() error {
	if a.Error != "" {
		return fmt.Errorf("content process %d: %s", a.Pid, a.Error)
	}
	return nil
}

// ask runs op of process.js in the page's process (scope "page"), every
// content process ("all") or the one of a pid (an int64), from the page's
// content process (debugger.js), and decodes the answers' values as T.
// The other processes answer through the hub: their answers are asked
// for until they are there.
func ask[T any](ctx context.Context, e *Engine, op string, arg, scope any) (replies[T], error) {
	var r struct {
		replies[T]
		Asked string `json:"asked"`
		Error string `json:"error"`
	}
	if err := e.debugger(ctx, op, arg, scope, &r); err != nil {
		return replies[T]{}, err
	}
	for wait := time.Millisecond; r.Asked != ""; wait = min(2*wait, 20*time.Millisecond) {
		select {
		case <-ctx.Done():
			return replies[T]{}, wire.Errorf(wire.Timeout, "Firefox's content processes did not all answer: %v", ctx.Err())
		case <-time.After(wait):
		}
		id := r.Asked
		r.Asked = ""
		if err := e.debugger(ctx, "", id, "answered", &r); err != nil {
			return replies[T]{}, err
		}
		if r.Answers == nil && r.Error == "" {
			r.Asked = id // not yet
		}
	}
	if r.Error != "" {
		return replies[T]{}, fmt.Errorf("Debugger.Memory in Firefox's content processes: %s", r.Error)
	}
	return r.replies, nil
}

// replies are the answers of content processes to a question, the id of
// the asking page's top-level browsing context (its tab), and the pid of
// the page's process, which asked.
type replies[T any] struct {
	Top     int64       `json:"top"`
	Asker   int64       `json:"asker"`
	Answers []answer[T] `json:"answers"`
}

// debuggerWait is what the content processes have to answer a question
// when the command's context has no deadline.
const debuggerWait = 30 * time.Second

// debugger runs debugger.js and decodes its answer into v (a null answer
// leaves v as it is). The content processes have nine tenths of what is
// left of ctx to answer.
func (e *Engine) debugger(ctx context.Context, op string, arg, scope, v any) error {
	wait := debuggerWait
	if dl, ok := ctx.Deadline(); ok {
		wait = time.Until(dl) * 9 / 10
	}
	raw, err := e.system(ctx, "Debugger.Memory in Firefox's content process", debuggerScript, op, arg, scope, max(wait.Milliseconds(), 1))
	if err != nil {
		return err
	}
	var s *string // debugger.js answers JSON in a string
	if err := json.Unmarshal(raw, &s); err != nil || s == nil {
		return err
	}
	return json.Unmarshal([]byte(*s), v)
}

// set changes the session's memory settings by change, in every content
// process, those yet to start included.
func (e *Engine) set(ctx context.Context, change func(*settings)) (settings, error) {
	if err := e.settingsTurn.Take(ctx); err != nil {
		return settings{}, err
	}
	defer e.settingsTurn.Give()
	s := e.settings
	change(&s)
	var got settings
	if err := e.debugger(ctx, "", s, "settings", &got); err != nil {
		return settings{}, err
	}
	e.settings = got
	return got, nil
}

// SamplingInterval is p itself: SpiderMonkey samples allocations by
// probability (allocationSamplingProbability), natively.
func (e *Engine) SamplingInterval(p float64) float64 { return p }

// SampleAllocations turns trackingAllocationSites on at probability p in
// every content process.
func (e *Engine) SampleAllocations(ctx context.Context, p float64) (engine.AllocationSampling, error) {
	if _, err := e.set(ctx, func(s *settings) { s.Track, s.P = true, p }); err != nil {
		return nil, err
	}
	return &allocationLog{e: e, p: p}, nil
}

// allocationLog is SpiderMonkey's allocation log of the session's content
// processes.
type allocationLog struct {
	e *Engine
	p float64
}

// Take drains every content process's log (drainAllocationsLog), and
// those of processes that shut down since the last Take, oldest entry
// first, with what the processes dropped; then samples on at p.
func (a *allocationLog) Take(ctx context.Context, p float64) ([]wire.AllocationEntry, int, error) {
	r, err := ask[drained](ctx, a.e, "drain", nil, "all")
	if err != nil {
		return nil, 0, err
	}
	var logs [][]wire.AllocationEntry
	dropped := 0
	for _, an := range r.Answers {
		if err := an.err(); err != nil {
			return nil, 0, err
		}
		p := a.p
		if an.Value.P > 0 {
			p = an.Value.P
		}
		entries, err := an.Value.entries(p)
		if err != nil {
			return nil, 0, err
		}
		if len(entries) > 0 {
			logs = append(logs, entries)
		}
		dropped += an.Value.Dropped
	}
	out := oldestFirst(logs)
	if p != a.p {
		if _, err := a.e.set(ctx, func(s *settings) { s.P = p }); err != nil {
			return nil, 0, err
		}
		a.p = p
	}
	return out, dropped, nil
}

// oldestFirst merges logs, each oldest first already (the processes'
// timestamps are of one clock), into one.
func oldestFirst(logs [][]wire.AllocationEntry) []wire.AllocationEntry {
	switch len(logs) {
	case 0:
		return nil
	case 1:
		return logs[0]
	}
	n := 0
	for _, l := range logs {
		n += len(l)
	}
	out := make([]wire.AllocationEntry, 0, n)
	for len(out) < n {
		first := -1
		for i, l := range logs {
			if len(l) > 0 && (first < 0 || *l[0].Timestamp < *logs[first][0].Timestamp) {
				first = i
			}
		}
		out = append(out, logs[first][0])
		logs[first] = logs[first][1:]
	}
	return out
}

// drained is process.js's log, by columns: each stack once, and per
// entry its timestamp, stack index (-1: none), class, size and inNursery
// (SpiderMonkey's entries carry no constructor: it stays null); how
// many entries the process dropped (SpiderMonkey's log, or its own copy,
// overflowed); and the probability the process sampled at (1 while live
// objects are tracked, whatever the client asked).
type drained struct {
	Dropped   int            `json:"dropped"`
	P         float64        `json:"p"`
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

// Stop turns trackingAllocationSites off everywhere.
func (a *allocationLog) Stop(ctx context.Context) error {
	_, err := a.e.set(ctx, func(s *settings) { s.Track = false })
	return err
}

// CollectGCs sets or clears onGarbageCollection in every content process.
func (e *Engine) CollectGCs(ctx context.Context, collect bool) (bool, error) {
	s, err := e.set(ctx, func(s *settings) { s.GCLog = collect })
	return s.GCLog, err
}

// gcStats is onGarbageCollection's statistics object.
type gcStats struct {
	Collections          []wire.GCSlice `json:"collections"`
	Reason               *string        `json:"reason"`
	NonincrementalReason *string        `json:"nonincrementalReason"`
	GCCycleNumber        int64          `json:"gcCycleNumber"`
}

// GCs returns what onGarbageCollection reported since the last call in
// every content process, and in those that shut down meanwhile:
// SpiderMonkey's major collections of zones with the session's web
// globals (it reports no minor ones), each with its process's pid.
func (e *Engine) GCs(ctx context.Context) (wire.GCLog, error) {
	r, err := ask[struct {
		Collecting bool      `json:"collecting"`
		GCs        []gcStats `json:"gcs"`
	}](ctx, e, "gcs", nil, "all")
	if err != nil {
		return wire.GCLog{}, err
	}
	out := wire.GCLog{Entries: []wire.GCEntry{}}
	for _, an := range r.Answers {
		if err := an.err(); err != nil {
			return wire.GCLog{}, err
		}
		out.Collecting = out.Collecting || an.Value.Collecting
		for _, s := range an.Value.GCs {
			out.Entries = append(out.Entries, wire.GCEntry{
				Collections: s.Collections, Reason: s.Reason, NonincrementalReason: s.NonincrementalReason,
				GCCycleNumber: s.GCCycleNumber, Collector: "major", Pid: an.Pid, Process: "content", Thread: "main",
			})
		}
	}
	slices.SortStableFunc(out.Entries, func(x, y wire.GCEntry) int { return cmp.Compare(start(x), start(y)) })
	return out, nil
}

// start is when a collection began (its first slice), or 0.
func start(g wire.GCEntry) float64 {
	if len(g.Collections) == 0 {
		return 0
	}
	return g.Collections[0].StartTimestamp
}

// processHeap is process.js's "heap": the documents of a process's web
// globals, and whether one is top-level.
type processHeap struct {
	URLs []string `json:"urls"`
	Top  bool     `json:"top"`
}

// Heaps is the page's heap, counted by SpiderMonkey's own takeCensus in
// its content process; with all, then every other content process with
// web documents (but about:blank): frames of other sites (Fission puts
// them in processes of their own) and the session's other windows. A process's census counts
// all its web globals. Workers are not reached.
func (e *Engine) Heaps(ctx context.Context, all bool) ([]engine.Heap, error) {
	url, err := engine.CurrentURL(ctx, e.driver)
	if err != nil {
		return nil, err
	}
	heaps := []engine.Heap{{Type: "page", URL: url, Census: e.census("page")}}
	if !all {
		return heaps, nil
	}
	r, err := ask[processHeap](ctx, e, "heap", nil, "all")
	if err != nil {
		return nil, err
	}
	heaps[0].ID = processID(r.Asker)
	for _, an := range r.Answers {
		h := an.Value
		if an.Pid == r.Asker || an.err() != nil || blank(h.URLs) {
			continue
		}
		heap := engine.Heap{Type: "iframe", URL: h.URLs[0], ID: processID(an.Pid), Census: e.census(an.Pid)}
		if h.Top {
			heap.Type = "page"
		}
		heaps = append(heaps, heap)
	}
	return heaps, nil
}

// blank reports whether urls has none but about:blank (a process left
// with the blank document a tab started with).
func blank(urls []string) bool {
	return !slices.ContainsFunc(urls, func(u string) bool { return u != "about:blank" })
}

// processID names a content process as a heap's target id.
func processID(pid int64) string { return "content process " + strconv.FormatInt(pid, 10) }

// census runs takeCensus with the client's breakdown (absent: the
// default) in the page's process or the process of a pid.
func (e *Engine) census(scope any) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, breakdown json.RawMessage) (any, error) {
		var arg any
		if len(breakdown) > 0 {
			arg = breakdown
		}
		r, err := ask[json.RawMessage](ctx, e, "census", arg, scope)
		if err != nil {
			return nil, err
		}
		if len(r.Answers) == 0 {
			return nil, fmt.Errorf("the content process went away")
		}
		return r.Answers[0].Value, r.Answers[0].err()
	}
}
