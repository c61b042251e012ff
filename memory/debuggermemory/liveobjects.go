package debuggermemory

import (
	"cmp"
	"context"
	"slices"
	"sync"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"

	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
)

// liveObjects is a session's allocation tracking between start and stop.
type liveObjects struct {
	mu sync.Mutex
	ts *targetSession // nil when not started
	wk *webkitLive    // the same on WebKit
}

func liveStartCommand(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	st, err := stateNoParams(sess, body)
	if err != nil {
		return nil, err
	}
	l := &st.live
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ts != nil || l.wk != nil {
		return nil, webdriver.Errorf(webdriver.UnsupportedOperation, "live object tracking has already started; stop it first")
	}
	if sess.Inspector != nil {
		l.wk, err = startWebKitLive(ctx, sess)
		return nil, err
	}
	ts, err := st.attachCurrentPage(ctx, sess)
	if err != nil {
		return nil, err
	}
	// A fresh allocation tracker: V8 records the stack of every
	// allocation from now on, and nothing before.
	if _, err := cdproto.Call(ctx, ts.s, heapprofiler.StartTrackingHeapObjects, heapprofiler.StartTrackingHeapObjectsParams{TrackAllocations: &yes}); err != nil {
		st.forget(ts)
		return nil, cdpError("starting V8's allocation tracker", err)
	}
	l.ts = ts
	return nil, nil
}

func liveStopCommand(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	st, err := stateNoParams(sess, body)
	if err != nil {
		return nil, err
	}
	l := &st.live
	l.mu.Lock()
	defer l.mu.Unlock()
	if wk := l.wk; wk != nil {
		l.wk = nil
		return wk.stop(ctx)
	}
	if l.ts == nil {
		return nil, webdriver.Errorf(webdriver.UnsupportedOperation, "live object tracking has not started")
	}
	ts := l.ts
	l.ts = nil
	// stopTrackingHeapObjects takes a heap snapshot (after a GC, so only
	// live objects) while the tracker still runs, then stops it.
	snap, err := streamSnapshot(ctx, ts, func(ctx context.Context) error {
		_, err := cdproto.Call(ctx, ts.s, heapprofiler.StopTrackingHeapObjects, heapprofiler.StopTrackingHeapObjectsParams{
			ReportProgress:      &no,
			CaptureNumericValue: &no,
			ExposeInternals:     &no,
		})
		return err
	})
	if err != nil {
		st.forget(ts)
		return nil, cdpError("stopping V8's allocation tracker", err)
	}
	return groupLive(snap), nil
}

// groupLive groups the snapshot's objects that have an allocation trace,
// that is, that were allocated while the tracker ran, by stack and class.
// V8 keeps a trace only for allocations it saw, so older objects have none
// (trace node 0).
func groupLive(snap *heapsnapshot.Snapshot) LiveObjects {
	type key struct {
		trace uint32
		class string
	}
	groups := map[key]*LiveObjectGroup{}
	out := LiveObjects{LiveObjects: []LiveObjectGroup{}}
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
			g = &LiveObjectGroup{CreatedFrom: frames, Class: class}
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
	sortGroups(out.LiveObjects)
	return out
}

// sortGroups puts the largest groups first.
func sortGroups(groups []LiveObjectGroup) {
	slices.SortFunc(groups, func(a, b LiveObjectGroup) int {
		return cmp.Or(
			cmp.Compare(b.InstanceSize, a.InstanceSize),
			cmp.Compare(b.Count, a.Count),
			cmp.Compare(a.Class, b.Class),
			slices.CompareFunc(a.CreatedFrom, b.CreatedFrom, compareFrames),
		)
	})
}

func compareFrames(a, b heapsnapshot.Frame) int {
	return cmp.Or(
		cmp.Compare(a.Source, b.Source),
		cmp.Compare(a.Line, b.Line),
		cmp.Compare(a.Column, b.Column),
		cmp.Compare(a.FunctionDisplayName, b.FunctionDisplayName),
	)
}
