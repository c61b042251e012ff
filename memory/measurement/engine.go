package measurement

import (
	"fmt"

	"github.com/wdext/wdext/wire"
)

// TypeJavaScript is the memory type of the engine source's entries:
// Chromium's name for the same bytes in the page API's result (the V8 heap
// of a realm's isolate plus its ArrayBuffer backing stores).
const TypeJavaScript = "JavaScript"

// EngineFrame is one frame (a Window realm) of a page as the engine
// reports it: for Chromium, a node of Page.getFrameTree in the target that
// renders it.
type EngineFrame struct {
	ID       string
	ParentID string // "" for the top-level frame
	URL      string // the document's URL, fragment included
	Origin   string // the serialized origin of the document
	// Isolate names the V8 isolate (agent cluster address space) whose heap
	// holds the frame's realm.
	Isolate string
	// Container is the frame's owner element in the parent document; nil
	// for the top-level frame, or when the engine could not tell.
	Container *ContainerElement
}

// EngineWorker is one worker realm of a page.
type EngineWorker struct {
	URL string
	// Global is ScopeDedicatedWorker, ScopeSharedWorker or
	// ScopeServiceWorker.
	Global string
	// Frame is the ID of the frame whose document (maybe through other
	// dedicated workers) created a dedicated worker.
	Frame   string
	Isolate string
}

// EngineHeaps is an engine's view of a top-level browsing context: its
// frames and workers, and the bytes each isolate holds.
type EngineHeaps struct {
	Frames  []EngineFrame
	Workers []EngineWorker
	// Bytes is the memory of each isolate.
	Bytes map[string]uint64
}

// Intermediate builds the intermediate memory measurement (§2.2) of h: one
// entry per isolate, with the realms that isolate holds and
// TypeJavaScript.
//
// An engine reports heap sizes per isolate, not per realm, so the realms of
// one isolate (the top-level document and its same-process frames) share an
// entry: the spec allows an implementation to lump realms it cannot tell
// apart ("example: same-origin iframe lumped"). Dedicated workers have
// isolates of their own, and so do out-of-process iframes.
//
// Unlike §2.2, isolates in other address spaces are reported with their
// bytes rather than 0: the reader is a test harness, not the page, and the
// memory of cross-site iframes is what it asked for.
func (h EngineHeaps) Intermediate() ([]IntermediateMemoryBreakdownEntry, error) {
	realms := make(map[string]*Realm, len(h.Frames))
	var top *Realm
	for _, f := range h.Frames {
		realms[f.ID] = &Realm{Global: wire.ScopeWindow, URL: f.URL, Origin: f.Origin, Container: f.Container}
	}
	for _, f := range h.Frames {
		r := realms[f.ID]
		if f.ParentID == "" {
			if top != nil {
				return nil, fmt.Errorf("two top-level frames, %s and %s", top.URL, f.URL)
			}
			top = r
			r.Container = nil
			continue
		}
		p, ok := realms[f.ParentID]
		if !ok {
			return nil, fmt.Errorf("frame %s (%s) has parent %s, which is not among the frames", f.ID, f.URL, f.ParentID)
		}
		r.Parent = p
	}
	if top == nil {
		return nil, fmt.Errorf("no top-level frame among %d frames", len(h.Frames))
	}
	var order []string // isolates in order of first appearance
	byIsolate := map[string][]*Realm{}
	add := func(isolate string, r *Realm) {
		if _, ok := byIsolate[isolate]; !ok {
			order = append(order, isolate)
		}
		byIsolate[isolate] = append(byIsolate[isolate], r)
	}
	for _, f := range h.Frames {
		add(f.Isolate, realms[f.ID])
	}
	for _, w := range h.Workers {
		r := &Realm{Global: w.Global, URL: w.URL}
		if w.Global == wire.ScopeDedicatedWorker {
			p, ok := realms[w.Frame]
			if !ok {
				p = top // its frame went away: the page owns it still
			}
			r.Parent = p
			r.Origin = p.Origin
		}
		add(w.Isolate, r)
	}
	out := make([]IntermediateMemoryBreakdownEntry, 0, len(order))
	for _, iso := range order {
		out = append(out, IntermediateMemoryBreakdownEntry{
			Bytes:  h.Bytes[iso],
			Realms: byIsolate[iso],
			Types:  []string{TypeJavaScript},
		})
	}
	return out, nil
}
