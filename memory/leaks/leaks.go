package leaks

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
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

// A Summary is what a leak check keeps of a snapshot it compares the
// final one with (the baseline, memlab's target): the heap object ids,
// the sizes of the collections and the total size, a small part of the
// snapshot (4 bytes a node at most), so that the snapshot itself can go.
type Summary struct {
	// The ids: a bitmap (bit id set) when they are dense enough for it to
	// be the smaller, as V8's are (about 3 per node, 0.4 bytes a node),
	// else a sorted list.
	dense       bool
	idBits      []uint64
	ids         []uint32  // sorted
	collections []counted // sorted by id
	bytes       int64
}

// counted is a collection's size in a summary.
type counted struct {
	id    uint32
	count uint32
	bytes int64
}

// collection returns the size of the collection id in the summary.
func (m *Summary) collection(id uint32) (count int, bytes int64, ok bool) {
	k, ok := slices.BinarySearchFunc(m.collections, id, func(c counted, id uint32) int { return cmp.Compare(c.id, id) })
	if !ok {
		return 0, 0, false
	}
	return int(m.collections[k].count), m.collections[k].bytes, true
}

// Summarize summarises s.
func Summarize(s *heapsnapshot.Snapshot) *Summary { return SummarizeEntries(s, nil) }

// SummarizeEntries summarises s, whose collections have the sizes the
// engine measured (see Entries) where the snapshot does not show them.
func SummarizeEntries(s *heapsnapshot.Snapshot, sizes Entries) *Summary {
	n := s.NodeCount()
	// The nodes in two halves, the second on another core.
	var parts [2]summaryPart
	var wg sync.WaitGroup
	if n >= 1<<16 {
		wg.Go(func() { parts[1].summarize(s, sizes, n/2, n) })
		parts[0].summarize(s, sizes, 0, n/2)
	} else {
		parts[0].summarize(s, sizes, 0, n)
	}
	wg.Wait()
	m := &Summary{bytes: parts[0].bytes + parts[1].bytes, collections: slices.Concat(slices.Concat(parts[0].collections, parts[1].collections)...)}
	maxID := max(parts[0].maxID, parts[1].maxID)
	if m.dense = uint64(maxID) < 32*uint64(n); m.dense {
		m.idBits = make([]uint64, maxID/64+1)
		for i := range n {
			id := s.ID(i)
			m.idBits[id/64] |= 1 << (id % 64)
		}
	} else {
		m.ids = make([]uint32, n)
		for i := range n {
			m.ids[i] = s.ID(i)
		}
		if !slices.IsSorted(m.ids) {
			slices.Sort(m.ids)
		}
	}
	if !slices.IsSortedFunc(m.collections, compareCounted) {
		slices.SortFunc(m.collections, compareCounted)
	}
	return m
}

func compareCounted(a, b counted) int { return cmp.Compare(a.id, b.id) }

// summaryPart is what SummarizeEntries finds in a range of nodes.
type summaryPart struct {
	maxID uint32
	bytes int64
	// The collections, in blocks of a fixed size: there can be millions
	// ("Object" is one), and one slice would be copied as it grows.
	collections [][]counted
}

func (p *summaryPart) summarize(s *heapsnapshot.Snapshot, sizes Entries, lo, hi int) {
	for i := lo; i < hi; i++ {
		p.maxID = max(p.maxID, s.ID(i))
		p.bytes += s.SelfSize(i)
		if kind, ok := collectionKind(s, i); ok {
			c, b := entries(s, i, kind)
			if n, ok := sizes[s.ID(i)]; ok {
				c = n
			}
			if len(p.collections) == 0 || len(p.collections[len(p.collections)-1]) == countedBlock {
				p.collections = append(p.collections, make([]counted, 0, countedBlock))
			}
			last := &p.collections[len(p.collections)-1]
			*last = append(*last, counted{s.ID(i), uint32(min(c, math.MaxUint32)), b})
		}
	}
}

// countedBlock is the size of summaryPart's blocks.
const countedBlock = 1 << 14

// Has reports whether the summarised heap had an object of heap object id
// id.
func (m *Summary) Has(id uint32) bool {
	if m.dense {
		return int(id/64) < len(m.idBits) && m.idBits[id/64]&(1<<(id%64)) != 0
	}
	_, ok := slices.BinarySearch(m.ids, id)
	return ok
}

// objectClass is the class that groups node i among leaked objects: V8
// "object" nodes named after their constructor. V8's own objects
// ("system / …"), globals and prototypes ("… / url") and nameless ones
// ("(…)") are not the page's objects and are left out, as are functions
// (a closure is made whenever a function expression runs; what holds it
// is the leak, and is reported by its own kind).
func objectClass(s *heapsnapshot.Snapshot, i int) (string, bool) {
	if s.Type(i) != "object" {
		return "", false
	}
	name := s.Name(i)
	if name == "" || strings.HasPrefix(name, "system /") || strings.HasPrefix(name, "(") || strings.Contains(name, " / ") {
		return "", false
	}
	return name, true
}

// domName names a DOM node the way a developer would find it: the class
// of its wrapper's prototype and a selector from the tag V8 shows,
// "HTMLDivElement div.dialog" for a node named <div class="dialog">.
func domName(s *heapsnapshot.Snapshot, i int) string {
	name := s.Name(i)
	sel := selector(name)
	class := ""
	for e := range s.Edges(i) {
		if e.Type == "property" && e.Name == "__proto__" {
			class, _, _ = strings.Cut(s.Name(e.To), " ")
			break
		}
	}
	switch {
	case class != "" && sel != "":
		return class + " " + sel
	case sel != "":
		return sel
	}
	return strings.TrimPrefix(name, "Detached ")
}

// selector turns Blink's node name `<div id="a" class="b c">` into
// "div#a.b.c"; "" for a name that is not a tag.
func selector(name string) string {
	if !strings.HasPrefix(name, "<") || !strings.HasSuffix(name, ">") {
		return ""
	}
	body := strings.TrimSuffix(strings.TrimPrefix(name, "<"), ">")
	tag, attrs, _ := strings.Cut(body, " ")
	out := tag
	for attrs != "" {
		attrs = strings.TrimLeft(attrs, " ")
		key, rest, ok := strings.Cut(attrs, `="`)
		if !ok {
			break
		}
		val, rest2, _ := strings.Cut(rest, `"`)
		attrs = rest2
		switch key {
		case "id":
			out += "#" + val
		case "class":
			for _, c := range strings.Fields(val) {
				out += "." + c
			}
		}
	}
	return out
}

// collectionKind says whether node i is a collection whose growth is
// counted: an Array, Map, Set or plain Object.
func collectionKind(s *heapsnapshot.Snapshot, i int) (string, bool) {
	if s.Type(i) != "object" {
		return "", false
	}
	switch name := s.Name(i); name {
	case "Array", "Map", "Set", "Object":
		return name, true
	}
	return "", false
}

// entries counts a collection's entries and the bytes of its backing
// store. An Array counts its elements, an Object its properties, a Map
// or Set the entries of its hash table that hold a key or value other
// than a small integer (V8 snapshots leave those out: a Map from small
// integers to small integers looks empty).
func entries(s *heapsnapshot.Snapshot, i int, kind string) (count int, bytes int64) {
	switch kind {
	case "Array":
		for e := range s.Edges(i) {
			switch {
			case e.Type == "element":
				count++
			case e.Type == "internal" && e.Name == "elements":
				bytes = s.SelfSize(e.To)
			}
		}
	case "Object":
		for e := range s.Edges(i) {
			switch {
			case e.Type == "property" && e.Name != "__proto__":
				count++
			case e.Type == "internal" && e.Name == "properties":
				bytes = s.SelfSize(e.To)
			}
		}
	case "Map", "Set":
		for e := range s.Edges(i) {
			if e.Type == "internal" && e.Name == "table" {
				return tableEntries(s, e.To, kind == "Map"), s.SelfSize(e.To)
			}
		}
	}
	return count, bytes
}

// tableEntries counts the entries of an OrderedHashMap or OrderedHashSet
// from the slots its internal edges name. A set's entry is a key and a
// chain link; a map's is a key, a value and a link, three slots, and the
// first entry starts at 3 + the number of buckets (a power of 2), so
// keys sit at a slot ≡ 1 or 2 (mod 3) and values one further.
func tableEntries(s *heapsnapshot.Snapshot, table int, isMap bool) int {
	var slots []int
	for e := range s.Edges(table) {
		if e.Type != "internal" {
			continue
		}
		if k, err := strconv.Atoi(e.Name); err == nil && k >= 0 {
			slots = append(slots, k)
		}
	}
	if !isMap {
		return len(slots)
	}
	key := 2
	for _, k := range slots {
		if k%3 == 1 {
			key = 1
			break
		}
	}
	seen := map[int]bool{}
	for _, k := range slots {
		seen[(k-key)/3] = true
	}
	return len(seen)
}

// collectionName names a collection after what holds it:
// "Window.cache (Map)", "Foo.items (Array)", "Window.list[3] (Set)".
func collectionName(s *heapsnapshot.Snapshot, p *paths, i int, kind string) string {
	owner := "(unreachable)"
	if e, from, ok := p.parentEdge(i); ok {
		owner = displayName(s, from)
		switch e.Type {
		case "element", "hidden":
			owner += "[" + strconv.Itoa(e.Index) + "]"
		default:
			owner += "." + e.Name
		}
	}
	return owner + " (" + kind + ")"
}

// createdFrom is the youngest JavaScript frame of the members' allocation
// stacks, the one most of them share (V8's tracker loses the stack of a
// few objects a GC moves); null when none has a stack.
func createdFrom(s *heapsnapshot.Snapshot, members []int) *wire.LeakFrame {
	votes := map[wire.LeakFrame]int{}
	for _, m := range members {
		id := s.TraceNodeID(m)
		if id == 0 {
			continue
		}
		stack, ok := s.Stack(id)
		if !ok || len(stack) == 0 {
			continue
		}
		fr := stack[0]
		votes[wire.LeakFrame{FunctionName: fr.FunctionDisplayName, URL: fr.Source, Line: fr.Line, Column: fr.Column}]++
	}
	var best *wire.LeakFrame
	bestN := 0
	for fr, v := range votes {
		if v > bestN || v == bestN && frameLess(fr, *best) {
			fr := fr
			best, bestN = &fr, v
		}
	}
	return best
}

func frameLess(a, b wire.LeakFrame) bool {
	return cmp.Or(cmp.Compare(a.URL, b.URL), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), cmp.Compare(a.FunctionName, b.FunctionName)) < 0
}
