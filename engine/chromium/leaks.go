package chromium

import (
	"context"
	"fmt"
	"strconv"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domdebugger"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/memory/leaks"
	"github.com/wdext/wdext/wire"
)

// leakTracking is a leak check in one isolate, between leaks/start and
// stop: the page's, or an out-of-process frame's or a worker's.
type leakTracking struct {
	e        *Engine
	ts       *targetSession
	t        *target.Info   // the page, frame or worker, as it was at the start
	origin   float64        // the document's performance.timeOrigin at the start
	isolate  string         // Runtime.getIsolateId's at the start: the tracker's
	baseline *leaks.Summary // what is kept of the baseline snapshot
	before   []leaks.Listener
	// began is when leaks/start answered, and the iterations could begin.
	began time.Time
	ticks *ticks // the allocation clock's updates, from the tracker's start
	// marks are the clock's readings where the client's iterations ended
	// (MarkIteration), 0 where none came in time.
	marks []uint32
}

// leakGroup is the DevTools object group of the leak check's handles.
const leakGroup = "wdext-leaks"

// StartLeaks starts the check in the current window's page.
func (e *Engine) StartLeaks(ctx context.Context) (_ engine.LeakTracking, err error) {
	defer func() { err = e.ended(ctx, err) }()
	ts, page, err := e.attachCurrentPage(ctx)
	if err != nil {
		return nil, err
	}
	l, err := e.startLeaks(ctx, ts, page)
	if err != nil {
		return nil, err
	}
	l.began = time.Now()
	return l, nil
}

// startLeaks collects garbage in target t (attached as ts), counts its
// event listeners, takes the baseline heap snapshot and starts V8's
// allocation tracker with allocation stacks.
func (e *Engine) startLeaks(ctx context.Context, ts *targetSession, t *target.Info) (*leakTracking, error) {
	l := &leakTracking{e: e, ts: ts, t: t}
	step := "reading the document's time origin"
	err := e.onPage(ctx, ts.s, t, func(ctx context.Context) (err error) {
		if l.origin, err = timeOrigin(ctx, ts); err != nil {
			return err
		}
		if l.isolate, err = isolateID(ctx, ts); err != nil {
			return err
		}
		step = "collecting garbage"
		if _, err := cdproto.Call(ctx, ts.s, heapprofiler.CollectGarbage, cdproto.Empty{}); err != nil {
			return err
		}
		step = "counting event listeners"
		if l.before, err = listeners(ctx, ts); err != nil {
			return err
		}
		step = "taking the baseline heap snapshot"
		snap, err := takeSnapshot(ctx, ts, heapsnapshot.Read)
		if err != nil {
			return err
		}
		l.baseline = leaks.Summarize(snap)
		step = "starting V8's allocation tracker"
		l.ticks = watchTicks(ts)
		_, err = cdproto.Call(ctx, ts.s, heapprofiler.StartTrackingHeapObjects, heapprofiler.StartTrackingHeapObjectsParams{TrackAllocations: new(true)})
		return err
	})
	if err != nil {
		if l.ticks != nil {
			l.ticks.close()
		}
		e.forgetUnless(ts, err)
		return nil, engine.Failed("leaks/start: "+step, err)
	}
	return l, nil
}

// Stop checks that the current window is the page of the start, then
// ends the check (finish); in another window, the check ends unfinished.
func (l *leakTracking) Stop(ctx context.Context, iterations int) (_ wire.LeakReport, err error) {
	defer func() { err = l.e.ended(ctx, err) }()
	if err := l.sameWindow(ctx); err != nil {
		abandon(ctx, []isolateCheck{{l: l}})
		return wire.LeakReport{}, err
	}
	return l.finish(ctx, iterations, time.Now())
}

// MarkIteration notes the end of an iteration: the allocation clock's
// reading once every object made so far has its id (ticks.mark).
func (l *leakTracking) MarkIteration(ctx context.Context) error {
	l.markAt(ctx, time.Now())
	return nil
}

// markAt notes the clock's mark for an iteration that ended at at.
func (l *leakTracking) markAt(ctx context.Context, at time.Time) {
	l.marks = append(l.marks, l.ticks.mark(ctx, at))
}

// sameWindow checks that the session's current window is the one whose
// page the check started in.
func (l *leakTracking) sameWindow(ctx context.Context) error {
	handle, err := l.e.currentWindow(ctx)
	if err != nil {
		return err
	}
	if handle != string(l.t.TargetID) {
		return wire.Errorf(wire.UnsupportedOperation,
			"leaks/stop: the current window is not the one of leaks/start (%s): the check is ended; switch back to it and start again", l.t.TargetID)
	}
	return nil
}

// finish checks that the target shows the document of the start,
// takes the final snapshot with stopTrackingHeapObjects
// (which stops the tracker and includes the allocation stacks), reads the
// allocation clock (ticks.clock) for the iterations between the start's
// answer and stopped, counts event listeners again and compares it all
// with the baseline.
func (l *leakTracking) finish(ctx context.Context, iterations int, stopped time.Time) (wire.LeakReport, error) {
	defer l.ticks.close()
	e, ts := l.e, l.ts
	var final *heapsnapshot.Snapshot
	var after []leaks.Listener
	var clock uint32
	step := "reading the document's time origin"
	err := e.onPage(ctx, ts.s, l.t, func(ctx context.Context) (err error) {
		origin, err := timeOrigin(ctx, ts)
		if err != nil {
			return err
		}
		if origin != l.origin {
			l.abandon(ctx)
			return wire.Errorf(wire.UnsupportedOperation,
				"leaks/stop: the %s navigated or reloaded since leaks/start, so the baseline heap is gone: run leaks/start again on the page, then the iterations, then leaks/stop", l.t.Type)
		}
		// V8 collects all it can before it snapshots (HeapSnapshotGenerator
		// calls CollectAllAvailableGarbage), as HeapProfiler.collectGarbage
		// would: no collection of our own first.
		step = "taking the final heap snapshot"
		if final, err = streamSnapshot(ctx, ts, heapsnapshot.Read, func(ctx context.Context) error { return stopTracking(ctx, ts) }); err != nil {
			return err
		}
		// Stopping sent an update first (V8 gives every object its id
		// before the snapshot): the clock needs no wait for the next one.
		clock = l.ticks.clock(ctx, l.began, stopped, iterations)
		// After the snapshot, which gave every live object its heap
		// object id (V8 assigns them lazily: a handler made since the
		// last snapshot would have none yet).
		step = "counting event listeners"
		after, err = listeners(ctx, ts)
		return err
	})
	if err != nil {
		e.forgetUnless(ts, err)
		return wire.LeakReport{}, engine.Failed("leaks/stop: "+step, err)
	}
	return leaks.Find(leaks.Input{
		Baseline: l.baseline, Final: final, Iterations: iterations, Clock: clock, Marks: l.marks,
		ListenersBefore: l.before, ListenersAfter: after,
	})
}

// stopTracking stops V8's allocation tracker, which sends a heap snapshot
// (after a GC) with the allocation stacks.
func stopTracking(ctx context.Context, ts *targetSession) error {
	_, err := cdproto.Call(ctx, ts.s, heapprofiler.StopTrackingHeapObjects, heapprofiler.StopTrackingHeapObjectsParams{
		ReportProgress:      new(false),
		CaptureNumericValue: new(false),
		ExposeInternals:     new(false),
	})
	return err
}

// abandon stops the tracker of a check that cannot finish; the snapshot
// that stopping sends is read and dropped. When the target's isolate is
// no longer the tracker's (a navigation to another renderer process),
// there is nothing to stop: stopping would snapshot the new page's heap
// (tens of seconds for a big one) for nothing.
func (l *leakTracking) abandon(ctx context.Context) {
	defer l.ticks.close()
	if iso, err := isolateID(ctx, l.ts); err != nil || iso != l.isolate {
		return
	}
	streamSnapshot(ctx, l.ts, heapsnapshot.Read, func(ctx context.Context) error { return stopTracking(ctx, l.ts) })
}

// isolateID is the target's Runtime.getIsolateId: another renderer
// process has another isolate.
func isolateID(ctx context.Context, ts *targetSession) (string, error) {
	res, err := cdproto.Call(ctx, ts.s, runtime.GetIsolateID, cdproto.Empty{})
	return res.ID, err
}

// timeOrigin is the page's performance.timeOrigin: a new document (a
// navigation, a reload) has a new one.
func timeOrigin(ctx context.Context, ts *targetSession) (float64, error) {
	res, err := cdproto.Call(ctx, ts.s, runtime.Evaluate, runtime.EvaluateParams{Expression: "performance.timeOrigin", ReturnByValue: new(true)})
	if err != nil {
		return 0, err
	}
	if res.ExceptionDetails != nil {
		return 0, fmt.Errorf("performance.timeOrigin: %s", res.ExceptionDetails.Text)
	}
	return strconv.ParseFloat(string(res.Result.Value), 64)
}

// listeners lists the event listeners of the page's window and document
// (DOMDebugger.getEventListeners), with their handlers' heap object ids
// (0 when V8 has not given the handler one). Listeners on elements are
// not counted.
func listeners(ctx context.Context, ts *targetSession) ([]leaks.Listener, error) {
	defer cdproto.Call(ctx, ts.s, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: leakGroup})
	var out []leaks.Listener
	for _, t := range []struct{ expr, name string }{{"window", "Window"}, {"document", "Document"}} {
		obj, err := cdproto.Call(ctx, ts.s, runtime.Evaluate, runtime.EvaluateParams{Expression: t.expr, ObjectGroup: leakGroup})
		if err != nil {
			return nil, err
		}
		if obj.ExceptionDetails != nil || obj.Result.ObjectID == "" {
			continue // no document (an XML viewer, say)
		}
		res, err := cdproto.Call(ctx, ts.s, domdebugger.GetEventListeners, domdebugger.GetEventListenersParams{ObjectID: obj.Result.ObjectID})
		if err != nil {
			return nil, err
		}
		for _, ev := range res.Listeners {
			l := leaks.Listener{Target: t.name, Type: ev.Type}
			if ev.Handler != nil && ev.Handler.ObjectID != "" {
				id, err := cdproto.Call(ctx, ts.s, heapprofiler.GetHeapObjectID, heapprofiler.GetHeapObjectIDParams{ObjectID: ev.Handler.ObjectID})
				if err != nil {
					return nil, err
				}
				if n, err := strconv.ParseUint(string(id.HeapSnapshotObjectID), 10, 32); err == nil {
					l.HandlerID = uint32(n)
				}
			}
			out = append(out, l)
		}
	}
	return out, nil
}
