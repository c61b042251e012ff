package memory

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/wdext/wdext/memory/jscsnapshot"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wkinspector"
)

// The WebKit (WebKitGTK) backends of the measure and gc commands, through
// the browser's remote inspector (package wkinspector).
//
// WebKitGTK has no performance.measureUserAgentSpecificMemory, so source
// "api" is unsupported there. Source "engine" reads the page's frame tree
// (Page.getResourceTree), its dedicated workers (Worker domain) and the
// size of each JavaScriptCore VM: the sum of the cells of a heap snapshot
// (Heap.snapshot, which collects garbage first), ArrayBuffer contents
// included. The frames of a page share the web process's main-thread VM,
// so they share one entry (the spec's lumping), as do all pages of that
// process; each worker has a VM of its own. No CDP, no isolate ids: the
// VMs are named "main" and by worker id.

// mainVM names the web process's main-thread VM in EngineHeaps.
const mainVM = "main"

// measureWebKit is MeasureCommand for a WebKit session.
func measureWebKit(ctx context.Context, sess *session.Session, source string) (MemoryMeasurement, error) {
	if source == SourceAPI {
		return MemoryMeasurement{}, webdriver.Errorf(webdriver.UnsupportedOperation,
			"source %q: %s has no performance.measureUserAgentSpecificMemory (the Measure Memory API): use source %q", SourceAPI, sess.Engine, SourceEngine)
	}
	page, err := webkitPage(ctx, sess, "measure")
	if err != nil {
		return MemoryMeasurement{}, err
	}
	frames, err := webkitFrames(ctx, page)
	if err != nil {
		return MemoryMeasurement{}, err
	}
	workers, err := page.Workers(ctx)
	if err != nil {
		return MemoryMeasurement{}, err
	}
	heaps := EngineHeaps{Frames: frames, Bytes: map[string]uint64{}}
	top := frames[0].ID
	vms := []string{mainVM}
	for _, w := range workers {
		heaps.Workers = append(heaps.Workers, EngineWorker{URL: w.URL, Global: ScopeDedicatedWorker, Frame: top, Isolate: w.ID})
		vms = append(vms, w.ID)
	}
	sizes := make([]uint64, len(vms))
	errs := make([]error, len(vms))
	var wg sync.WaitGroup
	for i, vm := range vms {
		wg.Add(1)
		go func() { // owned here: waited for below
			defer wg.Done()
			sizes[i], errs[i] = vmBytes(ctx, page, vm)
		}()
	}
	wg.Wait()
	for i, vm := range vms {
		if errs[i] != nil {
			if vm == mainVM || ctx.Err() != nil {
				return MemoryMeasurement{}, fmt.Errorf("heap snapshot of %s: %w", vmName(vm), errs[i])
			}
			heaps.Workers = dropWorker(heaps.Workers, vm) // it went away
			continue
		}
		heaps.Bytes[vm] = sizes[i]
	}
	intermediate, err := heaps.Intermediate()
	if err != nil {
		return MemoryMeasurement{}, err
	}
	m := CreateNewMemoryMeasurement(intermediate, nil)
	if err := Validate(m); err != nil {
		return m, webdriver.Errorf(webdriver.UnknownError, "the engine measurement breaks the spec's invariants: %v", err)
	}
	return m, nil
}

// collectWebKit is GCCommand for a WebKit session: Heap.gc in the page's
// VM and in each dedicated worker's. JavaScriptCore reports no heap size
// without a heap snapshot, and a snapshot collects first, so only the size
// after the collection is known: UsedBefore is left out.
func collectWebKit(ctx context.Context, sess *session.Session) (*GCResult, error) {
	page, err := webkitPage(ctx, sess, "gc")
	if err != nil {
		return nil, err
	}
	var href string
	if err := page.Evaluate(ctx, "location.href", &href); err != nil {
		return nil, err
	}
	workers, err := page.Workers(ctx)
	if err != nil {
		return nil, err
	}
	type vm struct{ id, typ, url string }
	vms := []vm{{mainVM, "page", href}}
	for _, w := range workers {
		vms = append(vms, vm{w.ID, "worker", w.URL})
	}
	rows := make([]*GCTarget, len(vms))
	errs := make([]error, len(vms))
	var wg sync.WaitGroup
	for i, v := range vms {
		wg.Add(1)
		go func() { // owned here: waited for below
			defer wg.Done()
			if err := page.CollectGarbage(ctx, workerID(v.id)); err != nil {
				errs[i] = err
				return
			}
			after, err := vmBytes(ctx, page, v.id)
			if err != nil {
				errs[i] = err
				return
			}
			rows[i] = &GCTarget{Type: v.typ, URL: v.url, UsedAfter: after}
		}()
	}
	wg.Wait()
	res := &GCResult{Targets: []GCTarget{}}
	for i, r := range rows {
		switch {
		case r != nil:
			res.Targets = append(res.Targets, *r)
		case i == 0 || ctx.Err() != nil:
			return nil, fmt.Errorf("collecting garbage in %s: %w", vmName(vms[i].id), errs[i])
		}
	}
	return res, nil
}

// webkitPage finds the session's current page in its browser's inspector.
func webkitPage(ctx context.Context, sess *session.Session, cmd string) (*wkinspector.Conn, error) {
	page, err := wkinspector.CurrentPage(ctx, sess)
	if err != nil {
		if _, ok := err.(*webdriver.Error); ok {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, webdriver.Errorf(webdriver.Timeout, "memory/%s: finding the page in the WebKit inspector: %v", cmd, err)
		}
		return nil, webdriver.Errorf(webdriver.UnknownError, "memory/%s: finding the page in the WebKit inspector: %v", cmd, err)
	}
	return page, nil
}

// workerID is the wkinspector worker id of a VM.
func workerID(vm string) string {
	if vm == mainVM {
		return ""
	}
	return vm
}

func vmName(vm string) string {
	if vm == mainVM {
		return "the page's VM"
	}
	return "worker " + vm
}

// vmBytes is the size of a VM's live heap: the sum of a heap snapshot's
// cells.
func vmBytes(ctx context.Context, page *wkinspector.Conn, vm string) (uint64, error) {
	data, err := page.HeapSnapshot(ctx, workerID(vm))
	if err != nil {
		return 0, err
	}
	snap, err := jscsnapshot.Read(strings.NewReader(data))
	if err != nil {
		return 0, err
	}
	var total uint64
	for i := range snap.NodeCount() {
		total += uint64(snap.SelfSize(i))
	}
	return total, nil
}

// webkitFrame is a frame of Page.getResourceTree.
type webkitFrame struct {
	Frame struct {
		ID             string `json:"id"`
		ParentID       string `json:"parentId"`
		URL            string `json:"url"`
		SecurityOrigin string `json:"securityOrigin"`
	} `json:"frame"`
	ChildFrames []webkitFrame `json:"childFrames"`
}

// webkitFrames returns the page's frames, top first, with the container
// element of each child frame where its parent document tells: the
// parent's iframe, frame and object elements pair with its child frames
// in document order when there are as many of both.
func webkitFrames(ctx context.Context, page *wkinspector.Conn) ([]EngineFrame, error) {
	var tree struct {
		FrameTree webkitFrame `json:"frameTree"`
	}
	if err := page.Call(ctx, "Page.getResourceTree", nil, &tree); err != nil {
		return nil, err
	}
	contexts, err := page.FrameContexts(ctx)
	if err != nil {
		return nil, err
	}
	var out []EngineFrame
	var walk func(f webkitFrame, container *ContainerElement)
	walk = func(f webkitFrame, container *ContainerElement) {
		out = append(out, EngineFrame{
			ID: f.Frame.ID, ParentID: f.Frame.ParentID, URL: f.Frame.URL,
			Origin: serializedOrigin(f.Frame.SecurityOrigin), Isolate: mainVM, Container: container,
		})
		var owners []ContainerElement
		if id, ok := contexts[f.Frame.ID]; ok && len(f.ChildFrames) > 0 {
			owners = frameOwners(ctx, page, id)
		}
		for i, c := range f.ChildFrames {
			var ce *ContainerElement
			if len(owners) == len(f.ChildFrames) {
				ce = &owners[i]
			}
			walk(c, ce)
		}
	}
	walk(tree.FrameTree, nil)
	return out, nil
}

// frameOwners lists the frame owner elements of the document of an
// execution context, in document order.
func frameOwners(ctx context.Context, page *wkinspector.Conn, contextID int64) []ContainerElement {
	const expr = `Array.from(document.querySelectorAll("iframe, frame, object"), e => [e.localName, e.id, e.getAttribute("src") || "", e.getAttribute("data") || ""])`
	var elements [][4]string
	if err := page.EvaluateIn(ctx, contextID, expr, &elements); err != nil {
		return nil
	}
	out := make([]ContainerElement, 0, len(elements))
	for _, v := range elements {
		if v[0] == "object" && v[3] == "" {
			continue // an object element that is not a nested browsing context
		}
		out = append(out, ContainerElement{LocalName: v[0], ID: v[1], Src: v[2], Data: v[3]})
	}
	return out
}

func dropWorker(ws []EngineWorker, isolate string) []EngineWorker {
	out := ws[:0]
	for _, w := range ws {
		if w.Isolate != isolate {
			out = append(out, w)
		}
	}
	return out
}
