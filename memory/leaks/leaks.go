package leaks

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/wire"
)

// Listener is one event listener an engine found: on Target ("Window",
// "Document"), for events of Type, with its handler's heap object id
// (HandlerID; 0 when unknown).
type Listener struct {
	Target    string
	Type      string
	HandlerID uint32
}

// Input is what a leak check compares.
type Input struct {
	// Baseline summarises the heap before the first iteration, Final is
	// the heap after the last (both after a full garbage collection).
	Baseline *Summary
	Final    *heapsnapshot.Snapshot
	// Target, optional, summarises memlab's middle snapshot: when set,
	// only objects already allocated in Target count as new (leaked = in
	// Target, not in Baseline, still in Final).
	Target *Summary
	// Iterations is the number of times the scenario ran (≥ 1).
	Iterations int
	// ListenersBefore and ListenersAfter are the event listeners the
	// engine counted at the baseline and at the end; nil when it cannot.
	ListenersBefore, ListenersAfter []Listener
	// Entries are the sizes of Final's collections the engine measured
	// (see Entries); nil for V8, whose snapshots show them.
	Entries Entries
	// PageOnly counts only the new objects and the collections a path
	// from the page's global objects reaches. For JavaScriptCore, whose collector scans stacks
	// conservatively: garbage that a stale stack word or one of the
	// engine's own handles keeps is no leak of the page (measured on
	// WebKitGTK 2.50.6: an array of 200 dropped objects, held by the
	// root alone, in 1 final snapshot of 10).
	PageOnly bool
}

// Find compares the snapshots and returns the verdict: the groups that
// grew by at least Iterations and by a multiple of it.
func Find(in Input) (wire.LeakReport, error) {
	if in.Baseline == nil || in.Final == nil {
		return wire.LeakReport{}, errors.New("leaks: a baseline and a final snapshot are needed")
	}
	n := in.Iterations
	if n < 1 {
		return wire.LeakReport{}, fmt.Errorf("leaks: iterations must be at least 1, not %d", n)
	}
	f := in.Final
	isNew := func(i int) bool {
		id := f.ID(i)
		return !in.Baseline.Has(id) && (in.Target == nil || in.Target.Has(id))
	}
	grows := func(delta int64) bool { return delta >= int64(n) && delta%int64(n) == 0 }
	// The retainer paths on another core, while this one groups the new
	// objects and measures the collections, which needs no paths.
	var p *paths
	var wg sync.WaitGroup
	wg.Go(func() { p = retainers(f) })
	rep := wire.LeakReport{
		Iterations:  n,
		BytesBefore: in.Baseline.bytes,
		BytesAfter:  totalBytes(f),
		Leaks:       []wire.Leak{},
	}
	objects := map[string][]int{}
	detached := map[string][]int{}
	for i := range f.NodeCount() {
		if !isNew(i) {
			continue
		}
		if f.Detachedness(i) == detachedNode {
			name := domName(f, i)
			detached[name] = append(detached[name], i)
			continue
		}
		if class, ok := objectClass(f, i); ok {
			objects[class] = append(objects[class], i)
		}
	}
	// Collections present in both snapshots whose entries grew.
	type grew struct {
		i            int
		kind         string
		count, bytes int64 // the growth
	}
	var collections []grew
	for i := range f.NodeCount() {
		kind, ok := collectionKind(f, i)
		if !ok {
			continue
		}
		c0, b0, ok := in.Baseline.collection(f.ID(i))
		if !ok {
			continue
		}
		c1, b1 := entries(f, i, kind)
		if n, ok := in.Entries[f.ID(i)]; ok {
			c1 = n
		}
		if grows(int64(c1 - c0)) {
			collections = append(collections, grew{i, kind, int64(c1 - c0), b1 - b0})
		}
	}
	wg.Wait()
	if in.PageOnly {
		for _, groups := range []map[string][]int{objects, detached} {
			for name, members := range groups {
				groups[name] = slices.DeleteFunc(members, func(m int) bool { return !p.fromPage(m) })
			}
		}
		collections = slices.DeleteFunc(collections, func(c grew) bool { return !p.fromPage(c.i) })
	}

	// The nodes on the paths of reported groups: a collection that holds
	// a reported group grows because of it, and is not reported again.
	explained := map[int]bool{}
	for _, g := range []struct {
		kind   string
		groups map[string][]int
	}{{wire.LeakObjects, objects}, {wire.LeakDetachedDOM, detached}} {
		for name, members := range g.groups {
			if !grows(int64(len(members))) {
				continue
			}
			var bytes int64
			for _, m := range members {
				bytes += f.SelfSize(m)
			}
			rep0 := p.representative(members)
			for _, x := range p.nodes(rep0) {
				explained[x] = true
			}
			rep.Leaks = append(rep.Leaks, wire.Leak{
				Kind: g.kind, Name: name,
				CountDelta: int64(len(members)), PerIteration: int64(len(members) / n),
				BytesDelta:   bytes,
				RetainerPath: p.path(rep0),
				CreatedFrom:  createdFrom(f, members),
			})
		}
	}

	for _, c := range collections {
		if explained[c.i] {
			continue
		}
		rep.Leaks = append(rep.Leaks, wire.Leak{
			Kind: wire.LeakCollection, Name: collectionName(f, p, c.i, c.kind),
			CountDelta: c.count, PerIteration: c.count / int64(n),
			BytesDelta:   c.bytes,
			RetainerPath: p.path(c.i),
			CreatedFrom:  createdFrom(f, []int{c.i}),
		})
	}

	// Event listeners, as the engine counted them.
	if in.ListenersAfter != nil {
		count := map[string]int64{}
		for _, l := range in.ListenersBefore {
			count[l.Target+" "+l.Type]--
		}
		handlers := map[string][]int{}
		byID := nodesOf(f, in.ListenersAfter)
		for _, l := range in.ListenersAfter {
			k := l.Target + " " + l.Type
			count[k]++
			if j, ok := byID[l.HandlerID]; ok && l.HandlerID != 0 && isNew(j) {
				handlers[k] = append(handlers[k], j)
			}
		}
		for name, delta := range count {
			if !grows(delta) {
				continue
			}
			rep.Leaks = append(rep.Leaks, wire.Leak{
				Kind: wire.LeakEventListeners, Name: name,
				CountDelta: delta, PerIteration: delta / int64(n),
				RetainerPath: []string{},
				CreatedFrom:  createdFrom(f, handlers[name]),
			})
		}
	}
	Sort(rep.Leaks)
	return rep, nil
}

// kindOrder is the order of kinds in a report.
var kindOrder = []string{wire.LeakObjects, wire.LeakDetachedDOM, wire.LeakCollection, wire.LeakEventListeners}

// Sort orders leaks by kind (objects, detached DOM, collections, event
// listeners), then by bytes and count, largest first, then by name.
func Sort(l []wire.Leak) {
	slices.SortFunc(l, func(a, b wire.Leak) int {
		return cmp.Or(
			cmp.Compare(slices.Index(kindOrder, a.Kind), slices.Index(kindOrder, b.Kind)),
			cmp.Compare(b.BytesDelta, a.BytesDelta),
			cmp.Compare(b.CountDelta, a.CountDelta),
			cmp.Compare(a.Name, b.Name))
	})
}

// detachedNode is V8's detachedness of a DOM node no document holds.
const detachedNode = 2

func totalBytes(s *heapsnapshot.Snapshot) int64 {
	var t int64
	for i := range s.NodeCount() {
		t += s.SelfSize(i)
	}
	return t
}

// nodesOf maps the listeners' handler ids to node ordinals in s.
func nodesOf(s *heapsnapshot.Snapshot, ls []Listener) map[uint32]int {
	want := map[uint32]bool{}
	for _, l := range ls {
		if l.HandlerID != 0 {
			want[l.HandlerID] = true
		}
	}
	m := map[uint32]int{}
	if len(want) == 0 {
		return m
	}
	for i := range s.NodeCount() {
		if want[s.ID(i)] {
			m[s.ID(i)] = i
		}
	}
	return m
}
