package chromium

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/target"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/wire"
)

// Debugger.Memory's allocation probability maps to V8's sampling interval.
const (
	// referenceSize is the object size, in bytes, that
	// allocationSamplingProbability is the sampling probability of (V8
	// samples bytes, not objects: see SamplingInterval).
	referenceSize = 32
	// maxInterval is the largest interval V8 draws (INT_MAX bytes).
	maxInterval = math.MaxInt32
)

// SamplingInterval maps Debugger.Memory's allocationSamplingProbability
// to V8's mean sampling interval (see samplingInterval).
func (e *Engine) SamplingInterval(p float64) float64 { return samplingInterval(p) }

// samplingInterval maps a probability to V8's mean sampling interval: V8
// samples allocations as a Poisson process over bytes, so an object of s
// bytes is sampled with probability 1-exp(-s/interval). The interval is
// the one that samples a referenceSize-byte object with probability p:
// interval = -referenceSize / ln(1-p), at least 1 byte. Probability 1 is
// interval 1, which samples every allocation; 0 samples nothing.
func samplingInterval(p float64) float64 {
	switch {
	case p <= 0:
		return 0
	case p >= 1:
		return 1
	}
	i := math.Round(-referenceSize / math.Log1p(-p))
	return min(max(i, 1), maxInterval)
}

// allocSampler is V8's sampling heap profiler in one page: the allocation
// log's source.
type allocSampler struct {
	e        *Engine
	ts       *targetSession
	page     *target.Info // as it was when sampling started
	interval float64      // of the running sampler; 0 when none runs
}

// SampleAllocations starts V8's sampling heap profiler in the current
// window's page.
func (e *Engine) SampleAllocations(ctx context.Context, interval float64) (_ engine.AllocationSampling, err error) {
	defer func() { err = e.ended(ctx, err) }()
	ts, page, err := e.attachCurrentPage(ctx)
	if err != nil {
		return nil, err
	}
	a := &allocSampler{e: e, ts: ts, page: page}
	if err := a.start(ctx, interval); err != nil {
		e.forgetUnless(ts, err)
		return nil, engine.Failed("starting V8's sampling heap profiler", err)
	}
	return a, nil
}

func (a *allocSampler) Interval() float64 { return a.interval }

// onPage runs call on the sampler's page once the page has shown it
// answers (see Engine.onPage).
func (a *allocSampler) onPage(ctx context.Context, call func(context.Context) error) error {
	return a.e.onPage(ctx, a.ts.s, a.page, call)
}

func (a *allocSampler) start(ctx context.Context, interval float64) error {
	if interval <= 0 {
		a.interval = 0
		return nil // probability 0: nothing to sample
	}
	err := a.onPage(ctx, func(ctx context.Context) error {
		_, err := cdproto.Call(ctx, a.ts.s, heapprofiler.StartSampling, heapprofiler.StartSamplingParams{
			SamplingInterval: interval,
			// Without these V8 forgets samples of objects that died, and
			// the log is of allocations, not of survivors.
			IncludeObjectsCollectedByMajorGC: new(true),
			IncludeObjectsCollectedByMinorGC: new(true),
		})
		return err
	})
	if err != nil {
		return err
	}
	a.interval = interval
	return nil
}

// Stop stops the sampler.
func (a *allocSampler) Stop(ctx context.Context) (err error) {
	defer func() { err = a.e.ended(ctx, err) }()
	if a.interval <= 0 {
		return nil
	}
	err = a.onPage(ctx, func(ctx context.Context) error {
		_, err := cdproto.Call(ctx, a.ts.s, heapprofiler.StopSampling, cdproto.Empty{})
		return err
	})
	a.interval = 0
	if err != nil {
		return engine.Failed("stopping V8's sampling heap profiler", err)
	}
	return nil
}

// Take returns what the sampler logged and restarts it at interval. V8
// hands samples out only by stopping (getSamplingProfile returns every
// sample since the start, every time), so allocations between the stop
// and the start, one CDP round trip, are not logged.
func (a *allocSampler) Take(ctx context.Context, interval float64) (_ []wire.AllocationEntry, _ int, err error) {
	defer func() { err = a.e.ended(ctx, err) }()
	if a.interval <= 0 {
		if err := a.start(ctx, interval); err != nil {
			return nil, 0, engine.Failed("starting V8's sampling heap profiler", err)
		}
		return nil, 0, nil
	}
	old := a.interval
	var res heapprofiler.StopSamplingResult
	err = a.onPage(ctx, func(ctx context.Context) (err error) {
		res, err = cdproto.Call(ctx, a.ts.s, heapprofiler.StopSampling, cdproto.Empty{})
		return err
	})
	a.interval = 0
	if err != nil {
		return nil, 0, engine.Failed("stopping V8's sampling heap profiler", err)
	}
	if err := a.start(ctx, interval); err != nil {
		return nil, 0, engine.Failed("restarting V8's sampling heap profiler", err)
	}
	return logEntries(res.Profile, old), 0, nil
}

// logEntries turns a sampling heap profile into log entries, in allocation
// order (V8's sample ordinals are time-ordered).
func logEntries(p *heapprofiler.SamplingHeapProfile, interval float64) []wire.AllocationEntry {
	if p == nil || p.Head == nil {
		return nil
	}
	stacks := map[int64][]wire.Frame{}
	var walk func(n *heapprofiler.SamplingHeapProfileNode, parent []wire.Frame)
	walk = func(n *heapprofiler.SamplingHeapProfileNode, parent []wire.Frame) {
		stack := parent
		if f, ok := jsFrame(n); ok {
			stack = make([]wire.Frame, 0, len(parent)+1)
			stack = append(append(stack, f), parent...)
		}
		stacks[n.ID] = stack
		for _, c := range n.Children {
			walk(c, stack)
		}
	}
	walk(p.Head, []wire.Frame{})

	samples := slices.Clone(p.Samples)
	slices.SortFunc(samples, func(x, y *heapprofiler.SamplingHeapProfileSample) int {
		switch {
		case x.Ordinal < y.Ordinal:
			return -1
		case x.Ordinal > y.Ordinal:
			return 1
		}
		return 0
	})
	out := make([]wire.AllocationEntry, 0, len(samples))
	for _, s := range samples {
		stack, ok := stacks[s.NodeID]
		if !ok {
			stack = []wire.Frame{}
		}
		e := wire.AllocationEntry{Stack: stack, SampledBytes: int64(math.Round(s.Size))}
		if len(stack) > 0 {
			e.Frame = &stack[0]
		}
		if size, ok := objectSize(s.Size, interval); ok {
			e.Size = &size
		}
		out = append(out, e)
	}
	return out
}

// jsFrame converts a sampling profile node to a frame. The root and V8's
// pseudo-frames, which name the VM state when no JavaScript ran ("(V8
// API)", "(BYTECODE_COMPILER)", "(GC)", ...) or mark deoptimisation
// ("(deopt)"), are not frames.
func jsFrame(n *heapprofiler.SamplingHeapProfileNode) (wire.Frame, bool) {
	cf := n.CallFrame
	if cf == nil {
		return wire.Frame{}, false
	}
	name := cf.FunctionName
	if cf.URL == "" && (cf.ScriptID == "" || cf.ScriptID == "0") && strings.HasPrefix(name, "(") && strings.HasSuffix(name, ")") {
		return wire.Frame{}, false
	}
	id, _ := strconv.Atoi(string(cf.ScriptID))
	return wire.Frame{
		FunctionDisplayName: name,
		Source:              cf.URL,
		SourceID:            id,
		Line:                int(max(cf.LineNumber+1, 0)), // CDP is 0-based, -1 unknown
		Column:              int(max(cf.ColumnNumber+1, 0)),
	}, true
}

// v8Count is the number of allocations V8 says one sample of an object of
// size bytes stands for at the interval (SamplingHeapProfiler::ScaleSample:
// the reciprocal of the probability of sampling it, rounded).
func v8Count(size, interval float64) int64 {
	return int64(1/(1-math.Exp(-size/interval)) + 0.5)
}

// objectSize recovers an object's size from a sample's reported size,
// which V8 makes size × v8Count(size): the sizes that are multiples of 4
// (V8 aligns objects to at least 4 bytes) and consistent with the report.
// At interval 1 (probability 1) the count is always 1, so the size is
// exact; at larger intervals a small object is ambiguous (24 and 28 bytes
// both report 1008 at 1000) and the size is unknown.
func objectSize(reported, interval float64) (int64, bool) {
	r := int64(math.Round(reported))
	if r <= 0 || interval <= 0 {
		return 0, false
	}
	var size int64
	found := 0
	for k := int64(1); k <= min(r/4, 1<<16); k++ {
		if r%k != 0 {
			continue
		}
		s := r / k
		if s%4 == 0 && v8Count(float64(s), interval) == k {
			size = s
			found++
		}
	}
	return size, found == 1
}
