package webkitgtk

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/webkitgtk/wkinspector"
	"github.com/wdext/wdext/memory/jscsnapshot"
	"github.com/wdext/wdext/memory/measurement"
	"github.com/wdext/wdext/wire"
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

// mainVM names the web process's main-thread VM in measurement.EngineHeaps.
const mainVM = "main"

// MeasureMemory measures the current page: source "engine" (the default).
func (e *Engine) MeasureMemory(ctx context.Context, source string) (wire.MemoryMeasurement, error) {
	if source == wire.SourceAPI {
		return wire.MemoryMeasurement{}, wire.Errorf(wire.UnsupportedOperation,
			"source %q: %s has no performance.measureUserAgentSpecificMemory (the Measure Memory API): use source %q", wire.SourceAPI, e.browserName, wire.SourceEngine)
	}
	page, err := e.page(ctx)
	if err != nil {
		return wire.MemoryMeasurement{}, err
	}
	frames, err := webkitFrames(ctx, page)
	if err != nil {
		return wire.MemoryMeasurement{}, err
	}
	workers, err := page.Workers(ctx)
	if err != nil {
		return wire.MemoryMeasurement{}, err
	}
	heaps := measurement.EngineHeaps{Frames: frames, Bytes: map[string]uint64{}}
	top := frames[0].ID
	vms := []string{mainVM}
	for _, w := range workers {
		heaps.Workers = append(heaps.Workers, measurement.EngineWorker{URL: w.URL, Global: wire.ScopeDedicatedWorker, Frame: top, Isolate: w.ID})
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
				return wire.MemoryMeasurement{}, fmt.Errorf("heap snapshot of %s: %w", vmName(vm), errs[i])
			}
			heaps.Workers = dropWorker(heaps.Workers, vm) // it went away
			continue
		}
		heaps.Bytes[vm] = sizes[i]
	}
	intermediate, err := heaps.Intermediate()
	if err != nil {
		return wire.MemoryMeasurement{}, err
	}
	m := measurement.CreateNewMemoryMeasurement(intermediate, nil)
	if err := measurement.Validate(m); err != nil {
		return m, wire.Errorf(wire.UnknownError, "the engine measurement breaks the spec's invariants: %v", err)
	}
	return m, nil
}

// CollectGarbage runs Heap.gc in the page's
// VM and in each dedicated worker's. JavaScriptCore reports no heap size
// without a heap snapshot, and a snapshot collects first, so only the size
// after the collection is known: UsedBefore is left out.
func (e *Engine) CollectGarbage(ctx context.Context) (*wire.GCResult, error) {
	page, err := e.page(ctx)
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
	rows := make([]*wire.GCTarget, len(vms))
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
			rows[i] = &wire.GCTarget{Type: v.typ, URL: v.url, UsedAfter: after}
		}()
	}
	wg.Wait()
	res := &wire.GCResult{Targets: []wire.GCTarget{}}
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

// page finds the session's current page in its browser's inspector.
func (e *Engine) page(ctx context.Context) (*wkinspector.Conn, error) {
	page, err := e.currentPage(ctx)
	if err != nil {
		return nil, engine.Failed("finding the page in the WebKit inspector", err)
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
func webkitFrames(ctx context.Context, page *wkinspector.Conn) ([]measurement.EngineFrame, error) {
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
	var out []measurement.EngineFrame
	var walk func(f webkitFrame, container *measurement.ContainerElement)
	walk = func(f webkitFrame, container *measurement.ContainerElement) {
		out = append(out, measurement.EngineFrame{
			ID: f.Frame.ID, ParentID: f.Frame.ParentID, URL: f.Frame.URL,
			Origin: measurement.SerializedOrigin(f.Frame.SecurityOrigin), Isolate: mainVM, Container: container,
		})
		var owners []measurement.ContainerElement
		if id, ok := contexts[f.Frame.ID]; ok && len(f.ChildFrames) > 0 {
			owners = frameOwners(ctx, page, id)
		}
		for i, c := range f.ChildFrames {
			var ce *measurement.ContainerElement
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
func frameOwners(ctx context.Context, page *wkinspector.Conn, contextID int64) []measurement.ContainerElement {
	const expr = `Array.from(document.querySelectorAll("iframe, frame, object"), e => [e.localName, e.id, e.getAttribute("src") || "", e.getAttribute("data") || ""])`
	var elements [][4]string
	if err := page.EvaluateIn(ctx, contextID, expr, &elements); err != nil {
		return nil
	}
	out := make([]measurement.ContainerElement, 0, len(elements))
	for _, v := range elements {
		if v[0] == "object" && v[3] == "" {
			continue // an object element that is not a nested browsing context
		}
		out = append(out, measurement.ContainerElement{LocalName: v[0], ID: v[1], Src: v[2], Data: v[3]})
	}
	return out
}

func dropWorker(ws []measurement.EngineWorker, isolate string) []measurement.EngineWorker {
	out := ws[:0]
	for _, w := range ws {
		if w.Isolate != isolate {
			out = append(out, w)
		}
	}
	return out
}
