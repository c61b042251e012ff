package webkitgtk

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/webkitgtk/wkinspector"
	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/memory/jscsnapshot"
	"github.com/wdext/wdext/memory/leaks"
	"github.com/wdext/wdext/wire"
)

// The leak check on WebKitGTK, through the page's inspector: JavaScriptCore
// heap snapshots (after a full GC), whose cell ids stay the same across
// snapshots, read with their edges and translated into V8's vocabulary
// (leaks.FromJSC). What a JSC snapshot does not say, the page is asked,
// in one Runtime.evaluate along the paths of data properties and elements
// that reach the cells from the global object (globalPaths): the sizes of
// Maps and Sets (JSC shows no edges to their entries) and, for the
// wrappers of DOM nodes the scenario made, whether they are connected and
// their selectors. What no such path reaches (held by a closure only) is
// not asked about: such a Map's growth is not seen, and such a detached
// node counts as an object of its class, not as detached DOM. The
// event listeners of the window and document come from
// DOM.getEventListenersForNode on the document. JSC keeps no allocation
// stacks: createdFrom is null. JavaScriptCore gives a cell its heap id
// when a snapshot first sees it, and keeps it in later snapshots: a
// snapshot at each iteration mark (MarkIteration) makes the ids a clock
// of the iterations.

// webkitLeaks is a leak check in one page, between leaks/start and stop.
type webkitLeaks struct {
	page     *wkinspector.Conn
	origin   float64
	baseline *leaks.Summary
	measured leaks.Entries // the collections measured at the start
	before   []leaks.Listener
	// marks are the highest heap ids of the snapshots taken where the
	// client's iterations ended (MarkIteration).
	marks []uint32
}

// StartLeaks collects garbage in the current page's VM, counts its event
// listeners and keeps a summary of its heap.
func (e *Engine) StartLeaks(ctx context.Context) (engine.LeakTracking, error) {
	page, err := e.page(ctx)
	if err != nil {
		return nil, err
	}
	l := &webkitLeaks{page: page}
	step := "reading the document's time origin"
	err = func() (err error) {
		if err := page.Evaluate(ctx, "performance.timeOrigin", &l.origin); err != nil {
			return err
		}
		step = "counting event listeners"
		if l.before, err = webkitListeners(ctx, page); err != nil {
			return err
		}
		step = "taking the baseline heap snapshot"
		js, err := leakSnapshot(ctx, page)
		if err != nil {
			return err
		}
		step = "measuring the page's Maps and Sets"
		sizes, err := collectionSizes(ctx, page, js, nil)
		l.measured = sizes
		if err != nil {
			return err
		}
		step = "reading the baseline heap snapshot"
		snap, err := leaks.FromJSC(js, nil)
		if err != nil {
			return err
		}
		l.baseline = leaks.SummarizeEntries(snap, sizes)
		return nil
	}()
	if err != nil {
		return nil, engine.Failed("leaks/start: "+step, err)
	}
	return l, nil
}

// Stop checks that the page shows the document of the start, takes the
// final snapshot (after a GC), asks the page what the snapshot does not
// say, and compares.
func (l *webkitLeaks) Stop(ctx context.Context, iterations int) (wire.LeakReport, error) {
	page := l.page
	var final *heapsnapshot.Snapshot
	var sizes leaks.Entries
	var after []leaks.Listener
	step := "reading the document's time origin"
	err := func() (err error) {
		var origin float64
		if err := page.Evaluate(ctx, "performance.timeOrigin", &origin); err != nil {
			return err
		}
		if origin != l.origin {
			return wire.Errorf(wire.UnsupportedOperation,
				"leaks/stop: the page navigated or reloaded since leaks/start, so the baseline heap is gone: run leaks/start again on the page, then the iterations, then leaks/stop")
		}
		step = "counting event listeners"
		if after, err = webkitListeners(ctx, page); err != nil {
			return err
		}
		step = "taking the final heap snapshot"
		js, err := leakSnapshot(ctx, page)
		if err != nil {
			return err
		}
		step = "measuring the page's Maps and Sets"
		measured := func(id uint64) bool { _, ok := l.measured[uint32(id)]; return ok }
		if sizes, err = collectionSizes(ctx, page, js, measured); err != nil {
			return err
		}
		step = "asking the page about new DOM nodes"
		dom, err := newDOMNodes(ctx, page, js, l.baseline)
		if err != nil {
			return err
		}
		step = "reading the final heap snapshot"
		final, err = leaks.FromJSC(js, dom)
		return err
	}()
	if err != nil {
		return wire.LeakReport{}, engine.Failed("leaks/stop: "+step, err)
	}
	return leaks.Find(leaks.Input{
		Baseline: l.baseline, Final: final, Iterations: iterations, Entries: sizes,
		ListenersBefore: l.before, ListenersAfter: after, PageOnly: true, Marks: l.marks,
	})
}

// MarkIteration notes the end of an iteration: the highest heap id of a
// snapshot taken now. A cell first seen by that snapshot gets an id above
// the previous mark's, so a cell made in iteration i has an id above mark
// i-1 and up to mark i (leaks.Input.Marks), and a structure the page
// makes anew at each iteration is told from one that grows. Each mark
// costs a snapshot (with the garbage collection before it).
func (l *webkitLeaks) MarkIteration(ctx context.Context) error {
	data, err := l.page.HeapSnapshot(ctx, "")
	if err != nil {
		return engine.Failed("leaks/iteration: taking a heap snapshot", err)
	}
	js, err := jscsnapshot.Read(strings.NewReader(data))
	if err != nil {
		return wire.Errorf(wire.UnknownError, "leaks/iteration: reading WebKit's heap snapshot: %v", err)
	}
	var top uint64
	for i := range js.NodeCount() {
		top = max(top, js.ID(i))
	}
	l.marks = append(l.marks, uint32(top))
	return nil
}

// leakSnapshot takes a heap snapshot of the page's VM (which collects
// garbage first) and reads it with its edges.
func leakSnapshot(ctx context.Context, page *wkinspector.Conn) (*jscsnapshot.Snapshot, error) {
	data, err := page.HeapSnapshot(ctx, "")
	if err != nil {
		return nil, err
	}
	js, err := jscsnapshot.ReadGraph(strings.NewReader(data))
	if err != nil {
		return nil, wire.Errorf(wire.UnknownError, "reading WebKit's heap snapshot: %v", err)
	}
	return js, nil
}

// collectionSizes asks the page the size of each Map and Set of the
// latest snapshot js (of those keep accepts, when keep is not nil: a
// collection not measured at the start is not compared, as its size in
// JSC's snapshot, no entries, is no measure) that a path of data
// properties and elements reaches from the global object (see
// globalPaths); the others are not compared.
func collectionSizes(ctx context.Context, page *wkinspector.Conn, js *jscsnapshot.Snapshot, keep func(id uint64) bool) (leaks.Entries, error) {
	paths := globalPaths(js, func(i int) bool {
		c := js.ClassName(i)
		return (c == "Map" || c == "Set") && js.IsObject(i) && (keep == nil || keep(js.ID(i)))
	})
	// Told apart without an exception where it can be: a first TypeError
	// in the page makes JavaScriptCore create its constructor and
	// prototypes, objects the final snapshot would count as new
	// (measured: 205 in 1 run of 20).
	const size = `x => {
  if (!(x instanceof Map || x instanceof Set)) return -1;
  try { return x.size } catch { return -1 }
}`
	sizes, err := askAlong[*int](ctx, page, paths, size)
	if err != nil {
		return nil, err
	}
	out := make(leaks.Entries, len(paths))
	for k, p := range paths {
		if sizes[k] != nil && *sizes[k] >= 0 {
			out[uint32(js.ID(p.node))] = *sizes[k]
		}
	}
	return out, nil
}

// newDOMNodes asks the page about the DOM nodes whose wrappers the latest
// snapshot js has and the baseline lacked, those a path of data
// properties and elements reaches from the global object: connected or
// not, and their selectors. A node only a closure or the document holds
// is not asked about.
func newDOMNodes(ctx context.Context, page *wkinspector.Conn, js *jscsnapshot.Snapshot, baseline *leaks.Summary) (map[uint64]leaks.DOMNode, error) {
	paths := globalPaths(js, func(i int) bool {
		return js.Flags(i)&jscsnapshot.ElementSubtype != 0 && !baseline.Has(uint32(js.ID(i)))
	})
	const describe = `n => n instanceof Node ? [!n.isConnected, n instanceof Element
  ? n.localName + (n.id ? "#" + n.id : "") + Array.from(n.classList, c => "." + c).join("")
  : n.nodeName] : null`
	got, err := askAlong[*[2]any](ctx, page, paths, describe)
	if err != nil {
		return nil, err
	}
	out := make(map[uint64]leaks.DOMNode, len(paths))
	for k, p := range paths {
		if got[k] == nil {
			continue
		}
		detached, _ := got[k][0].(bool)
		sel, _ := got[k][1].(string)
		out[js.ID(p.node)] = leaks.DOMNode{Detached: detached, Selector: sel}
	}
	return out, nil
}

// globalPath is a JavaScript expression that reaches a node of a heap
// snapshot from the page's main world.
type globalPath struct {
	node int
	expr string // own(own(globalThis, "a"), 3), or from a global let or const: own(cache, "b")
}

// identifier matches the names a global let or const can have that an
// expression can name as they are.
var identifier = regexp.MustCompile(`^[\p{L}_$][\p{L}\p{N}_$]*$`)

// globalPaths finds, for the nodes want accepts, the shortest path from
// the current global object (a Window), or one of its global let and
// const bindings, through data properties and array elements only:
// evaluating it runs no page code (no getter, which JSC shows as a
// GetterSetter cell, and no Proxy, whose traps could run), and does not
// go through closures, which no expression can enter. The page is asked
// along these paths rather than through the inspector's handles to the
// cells: WebKitGTK 2.50.6 hangs the page on Heap.getRemoteObject
// (measured: no reply from the sixth call on, nor to any later command
// of the page, in every run). Every frame has a global; a path that two
// nodes share (window.cache in the page and in a frame) names neither
// for sure, and is left out.
func globalPaths(js *jscsnapshot.Snapshot, want func(i int) bool) []globalPath {
	n := js.NodeCount()
	expr := make([]string, n)
	seen := make([]bool, n)
	var queue []int
	visit := func(i int, e string) {
		seen[i] = true
		expr[i] = e
		queue = append(queue, i)
	}
	// From the globals the window proxies point to: a previous
	// document's global may still be in the heap, with the same property
	// names (measured: the Map at window.cache of the page before the
	// reload), and its paths would name the current document's objects.
	for i := range n {
		if js.ClassName(i) != "JSWindowProxy" {
			continue
		}
		for e := range js.Edges(i) {
			if js.ClassName(e.To) == "Window" && !seen[e.To] {
				visit(e.To, "globalThis")
			}
		}
	}
	// Then their global let and const bindings.
	for _, w := range slices.Clone(queue) {
		for e := range js.Edges(w) {
			if e.Type != "Internal" || js.ClassName(e.To) != "JSGlobalLexicalEnvironment" {
				continue
			}
			for v := range js.Edges(e.To) {
				if v.Type == "Variable" && identifier.MatchString(v.Name) && !seen[v.To] && js.IsObject(v.To) {
					visit(v.To, v.Name)
				}
			}
		}
	}
	var out []globalPath
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		if want(i) {
			out = append(out, globalPath{node: i, expr: expr[i]})
		}
		switch js.ClassName(i) {
		case "GetterSetter", "CustomGetterSetter", "ProxyObject":
			continue
		}
		for e := range js.Edges(i) {
			if seen[e.To] || !js.IsObject(e.To) {
				continue
			}
			switch {
			case e.Type == "Property" && !strings.HasPrefix(e.Name, "Symbol."):
				b, _ := json.Marshal(e.Name)
				visit(e.To, "own("+expr[i]+", "+string(b)+")")
			case e.Type == "Index":
				visit(e.To, "own("+expr[i]+", "+strconv.Itoa(e.Index)+")")
			}
		}
	}
	shared := map[string]int{}
	for _, p := range out {
		shared[p.expr]++
	}
	return slices.DeleteFunc(out, func(p globalPath) bool { return shared[p.expr] > 1 })
}

// askAlong evaluates, in the page's main world, fn on the value at the
// end of each path, in one Runtime.evaluate, and returns its answers. A
// step reads an own data property only (own): the page may have made
// it an accessor since the snapshot, and a getter is page code.
func askAlong[T any](ctx context.Context, page *wkinspector.Conn, paths []globalPath, fn string) ([]T, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	// A plain loop, a try for each path: a global let read before its
	// declaration ran throws.
	var b strings.Builder
	b.WriteString("(() => { const f = " + fn + ", out = [], describe = Object.getOwnPropertyDescriptor;\n")
	b.WriteString("const own = (o, k) => { const d = o != null && (typeof o === \"object\" || typeof o === \"function\") ? describe(o, k) : undefined; return d && \"value\" in d ? d.value : undefined; };\n")
	for _, p := range paths {
		b.WriteString("try { out.push(f(" + p.expr + ")) } catch { out.push(null) }\n")
	}
	b.WriteString("return out; })()")
	var out []T
	if err := page.Evaluate(ctx, b.String(), &out); err != nil {
		return nil, err
	}
	if len(out) != len(paths) {
		return nil, fmt.Errorf("%d answers for %d paths", len(out), len(paths))
	}
	return out, nil
}

// webkitListeners lists the event listeners of the page's window and
// document (DOM.getEventListenersForNode on the document, which gives
// the window's too). WebKit's inspector names no handler object, so
// HandlerID is 0. Listeners on elements are not counted.
func webkitListeners(ctx context.Context, page *wkinspector.Conn) ([]leaks.Listener, error) {
	var doc struct {
		Root struct {
			NodeID int64 `json:"nodeId"`
		} `json:"root"`
	}
	if err := page.Call(ctx, "DOM.getDocument", nil, &doc); err != nil {
		return nil, err
	}
	var r struct {
		Listeners []struct {
			Type     string `json:"type"`
			OnWindow bool   `json:"onWindow"`
			NodeID   int64  `json:"nodeId"`
		} `json:"listeners"`
	}
	if err := page.Call(ctx, "DOM.getEventListenersForNode", map[string]any{"nodeId": doc.Root.NodeID}, &r); err != nil {
		return nil, err
	}
	out := []leaks.Listener{}
	for _, ev := range r.Listeners {
		switch {
		case ev.OnWindow:
			out = append(out, leaks.Listener{Target: "Window", Type: ev.Type})
		case ev.NodeID == doc.Root.NodeID:
			out = append(out, leaks.Listener{Target: "Document", Type: ev.Type})
		}
	}
	return out, nil
}
