package debuggermemory

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/internal/turn"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/wire"
)

// Debugger.Memory's defaults.
const (
	defaultProbability = 1
	defaultMaxLog      = 5000
	// MaxAllocationsLogLength bounds maxAllocationsLogLength: the log
	// lives in wdext's memory until drained.
	MaxAllocationsLogLength = 1_000_000
)

// allocLog is a session's allocation log: the engine's allocation sampler
// in the page the tracking started on, and the entries taken from it.
type allocLog struct {
	turn        turn.Turn // one allocations command at a time, through its engine calls
	tracking    bool
	probability float64
	maxLen      int
	sampling    engine.AllocationSampling // nil when not tracking
	log         []wire.AllocationEntry
	seen        int // entries since the last drain, kept or not
	dropped     int // entries the engine sampled since the last drain and did not keep
}

func newAllocLog() allocLog {
	return allocLog{turn: turn.New(), probability: defaultProbability, maxLen: defaultMaxLog}
}

func (a *allocLog) interval() float64 {
	if a.sampling == nil {
		return 0
	}
	return a.sampling.Interval()
}

func (a *allocLog) settings() wire.AllocationSettings {
	return wire.AllocationSettings{
		TrackingAllocationSites:       a.tracking,
		AllocationSamplingProbability: a.probability,
		MaxAllocationsLogLength:       a.maxLen,
		AllocationsLogOverflowed:      a.overflowed(),
		SamplingInterval:              a.interval(),
	}
}

func allocationsCommand(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	var args wire.AllocationArgs
	if err := decodeStrict(body, &args, "trackingAllocationSites", "allocationSamplingProbability", "maxAllocationsLogLength"); err != nil {
		return nil, err
	}
	if p := args.AllocationSamplingProbability; p != nil && !(*p >= 0 && *p <= 1) {
		return nil, wire.Errorf(wire.InvalidArgument, "allocationSamplingProbability must be a number between 0 and 1, not %v", *p)
	}
	if n := args.MaxAllocationsLogLength; n != nil && (*n != math.Trunc(*n) || *n < 1 || *n > MaxAllocationsLogLength) {
		return nil, wire.Errorf(wire.InvalidArgument, "maxAllocationsLogLength must be an integer from 1 to %d, not %v", MaxAllocationsLogLength, *n)
	}
	st, err := stateOf(sess)
	if err != nil {
		return nil, err
	}
	a := &st.alloc
	if err := a.turn.Take(ctx); err != nil {
		return nil, err
	}
	defer a.turn.Give()

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
		err := a.sampling.Stop(ctx)
		a.reset()
		if err != nil {
			return nil, err
		}
	case a.tracking && st.sampler.SamplingInterval(p) != a.interval():
		// A new rate: keep what the old one logged, then restart.
		if err := a.collect(ctx, st.sampler.SamplingInterval(p)); err != nil {
			a.reset()
			return nil, err
		}
	case !a.tracking && track:
		s, err := engine.Need(sess, engine.AllocationLog)
		if err != nil {
			return nil, err
		}
		a.reset()
		sampling, err := s.SampleAllocations(ctx, s.SamplingInterval(p))
		if err != nil {
			return nil, err
		}
		st.sampler, a.sampling, a.tracking = s, sampling, true
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
	if err := a.turn.Take(ctx); err != nil {
		return nil, err
	}
	defer a.turn.Give()
	if !a.tracking {
		return nil, wire.Errorf(wire.UnsupportedOperation,
			"drainAllocationsLog: trackingAllocationSites is false; set it with POST /session/{id}/wdext/memory/allocations")
	}
	if err := a.collect(ctx, a.interval()); err != nil {
		a.reset()
		return nil, fmt.Errorf("draining the allocation sampler (allocation tracking is now off): %w", err)
	}
	out := wire.AllocationsLog{Log: a.log, Overflowed: a.overflowed()}
	if out.Log == nil {
		out.Log = []wire.AllocationEntry{}
	}
	a.log, a.seen, a.dropped = nil, 0, 0
	return out, nil
}

// overflowed says whether entries since the last drain were lost: more
// than maxAllocationsLogLength came, or the engine dropped some.
func (a *allocLog) overflowed() bool { return a.seen > a.maxLen || a.dropped > 0 }

// reset turns tracking off and forgets the log, keeping the settings.
func (a *allocLog) reset() {
	a.tracking, a.sampling = false, nil
	a.log, a.seen, a.dropped = nil, 0, 0
}

// collect moves what the sampler logged into the log, and samples on at
// interval.
func (a *allocLog) collect(ctx context.Context, interval float64) error {
	entries, dropped, err := a.sampling.Take(ctx, interval)
	if err != nil {
		return err
	}
	a.seen += len(entries)
	a.dropped += dropped
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
