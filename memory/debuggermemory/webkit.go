package debuggermemory

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wdext/wdext/memory/census"
	"github.com/wdext/wdext/memory/jscsnapshot"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wkinspector"
)

// webkitCensus is the census command for a WebKit session, through the
// browser's remote inspector: a JavaScriptCore heap snapshot of the page's
// VM (which holds every frame of the page: WebKitGTK keeps them in one
// web process) and, for "all", of each dedicated worker's VM.
func webkitCensus(ctx context.Context, sess *session.Session, bd census.Breakdown, targets string) (any, error) {
	page, err := wkinspector.CurrentPage(ctx, sess)
	if err != nil {
		return nil, cdpError("finding the current page in the WebKit inspector", err)
	}
	if targets != "all" {
		return vmCensus(ctx, page, "", bd)
	}
	var href string
	if err := page.Evaluate(ctx, "location.href", &href); err != nil {
		return nil, cdpError("reading the page's URL", err)
	}
	workers, err := page.Workers(ctx)
	if err != nil {
		return nil, cdpError("listing the page's workers", err)
	}
	c, err := vmCensus(ctx, page, "", bd)
	if err != nil {
		return nil, err
	}
	out := AllCensus{Targets: []TargetCensus{{Type: "page", URL: href, Census: c}}}
	for _, w := range workers {
		tc := TargetCensus{Type: "worker", URL: w.URL, TargetID: w.ID}
		tc.Census, err = vmCensus(ctx, page, w.ID, bd)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			tc.Error = webdriver.AsError(err).Message // it went away
		}
		out.Targets = append(out.Targets, tc)
	}
	return out, nil
}

// vmCensus takes a census of the page's VM (worker "") or a worker's.
func vmCensus(ctx context.Context, page *wkinspector.Conn, worker string, bd census.Breakdown) (any, error) {
	data, err := page.HeapSnapshot(ctx, worker)
	if err != nil {
		return nil, cdpError("taking a heap snapshot", err)
	}
	snap, err := jscsnapshot.Read(strings.NewReader(data))
	if err != nil {
		return nil, webdriver.Errorf(webdriver.UnknownError, "reading WebKit's heap snapshot: %v", err)
	}
	return census.Take(census.JSC(snap), bd)
}

// notOnWebKit is the "unsupported operation" of a command WebKit's
// inspector cannot serve, saying what is missing; nil for other sessions.
func notOnWebKit(sess *session.Session, command, missing string) error {
	if sess.Inspector == nil {
		return nil
	}
	return webdriver.Errorf(webdriver.UnsupportedOperation, "%s on %s: %s", command, sess.Engine, missing)
}

// What WebKit's inspector (WebKitGTK 2.50) lacks for each command.
var (
	noAllocationSites = fmt.Sprint("WebKit's inspector records no allocations as they happen ",
		"(no counterpart of V8's sampling heap profiler or allocation tracker; heap snapshots carry no allocation stacks)")
	noGCTimes = fmt.Sprint("WebKit's inspector reports collections (Heap.garbageCollected) without sizes, ",
		"and with start and end times of 0 outside a Timeline recording (measured)")
)

// webkitLive is live object tracking on a WebKit page: the identifiers
// of the cells of the heap snapshot Heap.startTracking took.
type webkitLive struct {
	page  *wkinspector.Conn
	start map[uint64]bool
}

// startWebKitLive starts the page VM's heap tracking (Heap.startTracking),
// which answers with a snapshot of the heap as it is, in an event.
func startWebKitLive(ctx context.Context, sess *session.Session) (*webkitLive, error) {
	page, err := wkinspector.CurrentPage(ctx, sess)
	if err != nil {
		return nil, cdpError("finding the current page in the WebKit inspector", err)
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
func (l *webkitLive) stop(ctx context.Context) (LiveObjects, error) {
	snap, err := trackingSnapshot(ctx, l.page, "Heap.stopTracking", "Heap.trackingComplete")
	if err != nil {
		return LiveObjects{}, err
	}
	groups := map[string]*LiveObjectGroup{}
	out := LiveObjects{LiveObjects: []LiveObjectGroup{}}
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
			g = &LiveObjectGroup{Class: class}
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
	sortGroups(out.LiveObjects)
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
		return nil, cdpError(method, err)
	}
	select {
	case data := <-got:
		snap, err := jscsnapshot.Read(strings.NewReader(data))
		if err != nil {
			return nil, webdriver.Errorf(webdriver.UnknownError, "reading the heap snapshot of %s: %v", event, err)
		}
		return snap, nil
	case <-ctx.Done():
		return nil, cdpError("waiting for "+event, ctx.Err())
	}
}
