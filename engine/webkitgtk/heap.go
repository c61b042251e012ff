package webkitgtk

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/webkitgtk/wkinspector"
	"github.com/wdext/wdext/memory/census"
	"github.com/wdext/wdext/memory/heap"
	"github.com/wdext/wdext/memory/jscsnapshot"
	"github.com/wdext/wdext/wire"
)

// Heaps lists the current page's VM (which holds every frame of the page:
// WebKitGTK keeps them in one web process) and, when all, each dedicated
// worker's; their snapshots are JavaScriptCore heap snapshots.
func (e *Engine) Heaps(ctx context.Context, all bool) ([]engine.Heap, error) {
	page, err := e.page(ctx)
	if err != nil {
		return nil, err
	}
	var href string
	if all {
		if err := page.Evaluate(ctx, "location.href", &href); err != nil {
			return nil, engine.Failed("reading the page's URL", err)
		}
	}
	out := []engine.Heap{{Type: "page", URL: href, Snapshot: vmHeap(page, "")}}
	if !all {
		return out, nil
	}
	workers, err := page.Workers(ctx)
	if err != nil {
		return nil, engine.Failed("listing the page's workers", err)
	}
	for _, w := range workers {
		out = append(out, engine.Heap{Type: "worker", URL: w.URL, ID: w.ID, Snapshot: vmHeap(page, w.ID)})
	}
	return out, nil
}

// vmHeap snapshots the page's VM (worker "") or a worker's.
func vmHeap(page *wkinspector.Conn, worker string) func(context.Context) (heap.Heap, error) {
	return func(ctx context.Context) (heap.Heap, error) {
		data, err := page.HeapSnapshot(ctx, worker)
		if err != nil {
			return nil, engine.Failed("taking a heap snapshot", err)
		}
		snap, err := jscsnapshot.Read(strings.NewReader(data))
		if err != nil {
			return nil, wire.Errorf(wire.UnknownError, "reading WebKit's heap snapshot: %v", err)
		}
		return census.JSC(snap), nil
	}
}

// webkitLive is live object tracking on a WebKit page: the identifiers
// of the cells of the heap snapshot Heap.startTracking took.
type webkitLive struct {
	page  *wkinspector.Conn
	start map[uint64]bool
}

// StartLiveObjects starts the page VM's heap tracking (Heap.startTracking),
// which answers with a snapshot of the heap as it is, in an event.
func (e *Engine) StartLiveObjects(ctx context.Context) (engine.LiveObjectTracking, error) {
	page, err := e.page(ctx)
	if err != nil {
		return nil, err
	}
	snap, err := trackingSnapshot(ctx, page, "Heap.startTracking", "Heap.trackingStart")
	if err != nil {
		return nil, err
	}
	l := &webkitLive{page: page, start: make(map[uint64]bool, snap.NodeCount())}
	for i := range snap.NodeCount() {
		l.start[snap.ID(i)] = true
	}
	return l, nil
}

// stop ends the tracking and groups the cells of its final snapshot
// that the first one lacked: those allocated meanwhile and still alive
// (JSC snapshots identify cells across snapshots). JavaScriptCore keeps
// no allocation stacks, so groups are by class only and CreatedFrom is
// null.
func (l *webkitLive) Stop(ctx context.Context) (wire.LiveObjects, error) {
	snap, err := trackingSnapshot(ctx, l.page, "Heap.stopTracking", "Heap.trackingComplete")
	if err != nil {
		return wire.LiveObjects{}, err
	}
	groups := map[string]*wire.LiveObjectGroup{}
	out := wire.LiveObjects{LiveObjects: []wire.LiveObjectGroup{}}
	for i := range snap.NodeCount() {
		if l.start[snap.ID(i)] || snap.ID(i) == 0 {
			continue // older, or the <root>
		}
		class := snap.ClassName(i)
		if !snap.IsObject(i) {
			class = "(" + class + ")"
		}
		g := groups[class]
		if g == nil {
			g = &wire.LiveObjectGroup{Class: class}
			groups[class] = g
		}
		g.Count++
		g.InstanceSize += snap.SelfSize(i)
		out.Count++
		out.InstanceSize += snap.SelfSize(i)
	}
	for _, g := range groups {
		out.LiveObjects = append(out.LiveObjects, *g)
	}
	out.Sort()
	return out, nil
}

// trackingSnapshot sends a Heap tracking command and returns the snapshot
// its event carries, which comes before the command's reply.
func trackingSnapshot(ctx context.Context, page *wkinspector.Conn, method, event string) (*jscsnapshot.Snapshot, error) {
	got := make(chan string, 1)
	stop := page.Subscribe(func(e wkinspector.Event) {
		if e.Worker != "" || e.Method != event {
			return
		}
		var p struct {
			SnapshotData string `json:"snapshotData"`
		}
		if json.Unmarshal(e.Params, &p) == nil {
			select {
			case got <- p.SnapshotData:
			default:
			}
		}
	})
	defer stop()
	if err := page.Call(ctx, method, nil, nil); err != nil {
		return nil, engine.Failed(method, err)
	}
	select {
	case data := <-got:
		snap, err := jscsnapshot.Read(strings.NewReader(data))
		if err != nil {
			return nil, wire.Errorf(wire.UnknownError, "reading the heap snapshot of %s: %v", event, err)
		}
		return snap, nil
	case <-ctx.Done():
		return nil, engine.Failed("waiting for "+event, ctx.Err())
	}
}
