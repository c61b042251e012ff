package chromium

import (
	"context"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/target"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/wire"
)

// liveTracking is V8's allocation tracker in one page, between
// live-objects/start and stop.
type liveTracking struct {
	e    *Engine
	ts   *targetSession
	page *target.Info // as it was when tracking started
}

// StartLiveObjects starts a fresh allocation tracker in the current
// window's page: V8 records the stack of every allocation from now on,
// and nothing before.
func (e *Engine) StartLiveObjects(ctx context.Context) (_ engine.LiveObjectTracking, err error) {
	defer func() { err = e.ended(ctx, err) }()
	ts, page, err := e.attachCurrentPage(ctx)
	if err != nil {
		return nil, err
	}
	err = e.onPage(ctx, ts.s, page, func(ctx context.Context) error {
		_, err := cdproto.Call(ctx, ts.s, heapprofiler.StartTrackingHeapObjects, heapprofiler.StartTrackingHeapObjectsParams{TrackAllocations: new(true)})
		return err
	})
	if err != nil {
		e.forgetUnless(ts, err)
		return nil, engine.Failed("starting V8's allocation tracker", err)
	}
	return &liveTracking{e: e, ts: ts, page: page}, nil
}

// Stop takes a heap snapshot (stopTrackingHeapObjects does, after a GC,
// so only live objects, while the tracker still runs), stops the tracker
// and groups the objects it saw allocated.
func (l *liveTracking) Stop(ctx context.Context) (_ wire.LiveObjects, err error) {
	defer func() { err = l.e.ended(ctx, err) }()
	ts := l.ts
	var snap *heapsnapshot.Snapshot
	err = l.e.onPage(ctx, ts.s, l.page, func(ctx context.Context) (err error) {
		snap, err = streamSnapshot(ctx, ts, heapsnapshot.ReadNodes, func(ctx context.Context) error {
			_, err := cdproto.Call(ctx, ts.s, heapprofiler.StopTrackingHeapObjects, heapprofiler.StopTrackingHeapObjectsParams{
				ReportProgress:      new(false),
				CaptureNumericValue: new(false),
				ExposeInternals:     new(false),
			})
			return err
		})
		return err
	})
	if err != nil {
		l.e.forgetUnless(ts, err)
		return wire.LiveObjects{}, engine.Failed("stopping V8's allocation tracker", err)
	}
	return groupLive(snap), nil
}

// groupLive groups the snapshot's objects that have an allocation trace,
// that is, that were allocated while the tracker ran, by stack and class.
// V8 keeps a trace only for allocations it saw, so older objects have none
// (trace node 0).
func groupLive(snap *heapsnapshot.Snapshot) wire.LiveObjects {
	type key struct {
		trace uint32
		class string
	}
	groups := map[key]*wire.LiveObjectGroup{}
	out := wire.LiveObjects{LiveObjects: []wire.LiveObjectGroup{}}
	for i := range snap.NodeCount() {
		id := snap.TraceNodeID(i)
		if id == 0 || snap.Type(i) == "synthetic" {
			continue
		}
		class, ok := snap.ClassName(i)
		if !ok {
			class = "(" + snap.Type(i) + ")"
		}
		k := key{id, class}
		g := groups[k]
		if g == nil {
			frames, ok := snap.Stack(id)
			if !ok {
				continue
			}
			g = &wire.LiveObjectGroup{CreatedFrom: frames, Class: class}
			groups[k] = g
		}
		g.Count++
		g.InstanceSize += snap.SelfSize(i)
	}
	for _, g := range groups {
		out.LiveObjects = append(out.LiveObjects, *g)
		out.Count += g.Count
		out.InstanceSize += g.InstanceSize
	}
	out.Sort()
	return out
}
