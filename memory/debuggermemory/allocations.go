package debuggermemory

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"

	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
)

// Debugger.Memory's defaults.
const (
	defaultProbability = 1
	defaultMaxLog      = 5000
	// MaxAllocationsLogLength bounds maxAllocationsLogLength: the log
	// lives in wdext's memory until drained.
	MaxAllocationsLogLength = 1_000_000
	// referenceSize is the object size, in bytes, that
	// allocationSamplingProbability is the sampling probability of (V8
	// samples bytes, not objects: see samplingInterval).
	referenceSize = 32
	// maxInterval is the largest interval V8 draws (INT_MAX bytes).
	maxInterval = math.MaxInt32
)

// allocLog is a session's allocation log: V8's sampling heap profiler in
// the page the tracking started on, and the entries taken from it.
type allocLog struct {
	mu          sync.Mutex
	tracking    bool
	probability float64
	maxLen      int
	interval    float64        // of the running sampler; 0 when none runs
	ts          *targetSession // where the sampler runs
	log         []AllocationEntry
	seen        int // entries since the last drain, kept or not
}

func newAllocLog() allocLog {
	return allocLog{probability: defaultProbability, maxLen: defaultMaxLog}
}

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

func (a *allocLog) settings() AllocationSettings {
	return AllocationSettings{
		TrackingAllocationSites:       a.tracking,
		AllocationSamplingProbability: a.probability,
		MaxAllocationsLogLength:       a.maxLen,
		AllocationsLogOverflowed:      a.seen > a.maxLen,
		SamplingInterval:              a.interval,
	}
}

func allocationsCommand(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	var args AllocationArgs
	if err := decodeStrict(body, &args, "trackingAllocationSites", "allocationSamplingProbability", "maxAllocationsLogLength"); err != nil {
		return nil, err
	}
	if p := args.AllocationSamplingProbability; p != nil && !(*p >= 0 && *p <= 1) {
		return nil, webdriver.Errorf(webdriver.InvalidArgument, "allocationSamplingProbability must be a number between 0 and 1, not %v", *p)
	}
	if n := args.MaxAllocationsLogLength; n != nil && (*n != math.Trunc(*n) || *n < 1 || *n > MaxAllocationsLogLength) {
		return nil, webdriver.Errorf(webdriver.InvalidArgument, "maxAllocationsLogLength must be an integer from 1 to %d, not %v", MaxAllocationsLogLength, *n)
	}
	st, err := stateOf(sess)
	if err != nil {
		return nil, err
	}
	a := &st.alloc
	a.mu.Lock()
	defer a.mu.Unlock()

	p, track := a.probability, a.tracking
	if args.AllocationSamplingProbability != nil {
		p = *args.AllocationSamplingProbability
	}
	if args.TrackingAllocationSites != nil {
		track = *args.TrackingAllocationSites
	}
	if args.MaxAllocationsLogLength != nil {
		a.maxLen = int(*args.MaxAllocationsLogLength)
		a.trim()
	}
	switch {
	case a.tracking && !track:
		// Tracking off: stop the sampler and drop what it logged, which
		// drainAllocationsLog could no longer return.
		err := a.stopSampler(ctx)
		a.reset()
		if err != nil {
			return nil, cdpError("stopping V8's sampling heap profiler", err)
		}
	case a.tracking && samplingInterval(p) != a.interval:
		// A new rate: keep what the old one logged, then restart.
		if err := a.collect(ctx, samplingInterval(p)); err != nil {
			a.reset()
			return nil, cdpError("restarting V8's sampling heap profiler", err)
		}
	case !a.tracking && track:
		if err := notOnWebKit(sess, "the allocation log", noAllocationSites); err != nil {
			return nil, err
		}
		ts, err := st.attachCurrentPage(ctx, sess)
		if err != nil {
			return nil, err
		}
		a.reset()
		a.ts = ts
		if err := a.startSampler(ctx, samplingInterval(p)); err != nil {
			st.forget(ts)
			a.reset()
			return nil, cdpError("starting V8's sampling heap profiler", err)
		}
		a.tracking = true
	}
	a.probability = p
	return a.settings(), nil
}

func drainCommand(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	st, err := stateNoParams(sess, body)
	if err != nil {
		return nil, err
	}
	a := &st.alloc
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.tracking {
		return nil, webdriver.Errorf(webdriver.UnsupportedOperation,
			"drainAllocationsLog: trackingAllocationSites is false; set it with POST /session/{id}/wdext/memory/allocations")
	}
	if err := a.collect(ctx, a.interval); err != nil {
		a.reset()
		return nil, cdpError("draining V8's sampling heap profiler (allocation tracking is now off)", err)
	}
	out := AllocationsLog{Log: a.log, Overflowed: a.seen > a.maxLen}
	if out.Log == nil {
		out.Log = []AllocationEntry{}
	}
	a.log, a.seen = nil, 0
	return out, nil
}

// reset turns tracking off and forgets the log, keeping the settings.
func (a *allocLog) reset() {
	a.tracking, a.interval, a.ts = false, 0, nil
	a.log, a.seen = nil, 0
}

var yes = true

func (a *allocLog) startSampler(ctx context.Context, interval float64) error {
	if interval <= 0 {
		a.interval = 0
		return nil // probability 0: nothing to sample
	}
	_, err := cdproto.Call(ctx, a.ts.s, heapprofiler.StartSampling, heapprofiler.StartSamplingParams{
		SamplingInterval: interval,
		// Without these V8 forgets samples of objects that died, and the
		// log is of allocations, not of survivors.
		IncludeObjectsCollectedByMajorGC: &yes,
		IncludeObjectsCollectedByMinorGC: &yes,
	})
	if err != nil {
		return err
	}
	a.interval = interval
	return nil
}

func (a *allocLog) stopSampler(ctx context.Context) error {
	if a.interval <= 0 || a.ts == nil {
		return nil
	}
	_, err := cdproto.Call(ctx, a.ts.s, heapprofiler.StopSampling, cdproto.Empty{})
	a.interval = 0
	return err
}

// collect moves what the sampler logged into the log and restarts it at
// interval. V8 hands samples out only by stopping (getSamplingProfile
// returns every sample since the start, every time), so allocations
// between the stop and the start, one CDP round trip, are not logged.
func (a *allocLog) collect(ctx context.Context, interval float64) error {
	if a.interval <= 0 {
		return a.startSampler(ctx, interval)
	}
	old := a.interval
	res, err := cdproto.Call(ctx, a.ts.s, heapprofiler.StopSampling, cdproto.Empty{})
	a.interval = 0
	if err != nil {
		return err
	}
	if err := a.startSampler(ctx, interval); err != nil {
		return err
	}
	entries := logEntries(res.Profile, old)
	a.seen += len(entries)
	a.log = append(a.log, entries...)
	a.trim()
	return nil
}

// trim keeps the newest maxLen entries: "the maxAllocationsLogLength most
// recent Object allocations since the last call to drainAllocationsLog".
func (a *allocLog) trim() {
	if over := len(a.log) - a.maxLen; over > 0 {
		a.log = slices.Clone(a.log[over:])
	}
}

// logEntries turns a sampling heap profile into log entries, in allocation
// order (V8's sample ordinals are time-ordered).
func logEntries(p *heapprofiler.SamplingHeapProfile, interval float64) []AllocationEntry {
	if p == nil || p.Head == nil {
		return nil
	}
	stacks := map[int64][]heapsnapshot.Frame{}
	var walk func(n *heapprofiler.SamplingHeapProfileNode, parent []heapsnapshot.Frame)
	walk = func(n *heapprofiler.SamplingHeapProfileNode, parent []heapsnapshot.Frame) {
		stack := parent
		if f, ok := jsFrame(n); ok {
			stack = make([]heapsnapshot.Frame, 0, len(parent)+1)
			stack = append(append(stack, f), parent...)
		}
		stacks[n.ID] = stack
		for _, c := range n.Children {
			walk(c, stack)
		}
	}
	walk(p.Head, []heapsnapshot.Frame{})

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
	out := make([]AllocationEntry, 0, len(samples))
	for _, s := range samples {
		stack, ok := stacks[s.NodeID]
		if !ok {
			stack = []heapsnapshot.Frame{}
		}
		e := AllocationEntry{Stack: stack, SampledBytes: int64(math.Round(s.Size))}
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
func jsFrame(n *heapprofiler.SamplingHeapProfileNode) (heapsnapshot.Frame, bool) {
	cf := n.CallFrame
	if cf == nil {
		return heapsnapshot.Frame{}, false
	}
	name := cf.FunctionName
	if cf.URL == "" && (cf.ScriptID == "" || cf.ScriptID == "0") && strings.HasPrefix(name, "(") && strings.HasSuffix(name, ")") {
		return heapsnapshot.Frame{}, false
	}
	id, _ := strconv.Atoi(string(cf.ScriptID))
	return heapsnapshot.Frame{
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
