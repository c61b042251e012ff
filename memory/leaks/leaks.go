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
	// Clock, when not zero, is a heap object id above those of all the
	// objects made by the end of the last iteration, with ids given in
	// the order objects were made (V8's allocation tracker), finely
	// enough to tell the iterations apart: with it and the Baseline's
	// highest id, a group must have grown across the iterations, not
	// only in the last one (see growth). Zero (offline snapshots,
	// JavaScriptCore, iterations too quick): fuite's rule alone.
	Clock uint32
	// Marks, when there is one for each iteration but the last (a last
	// one is ignored) and none is zero, are heap object ids from the same
	// clock where each iteration ended: the ids of iteration i's objects
	// are above Marks[i-2] and up to Marks[i-1]. With them a group must
	// have members from the first iteration (see growthMarked).
	Marks []uint32
	// MemlabRules reports only what memlab find-leaks' default rules call
	// a leak: detached DOM nodes and unmounted React fibers (see
	// memlabRules). For the snapshots of one iteration, where growth
	// cannot be told from a structure made anew.
	MemlabRules bool
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
	if in.Iterations < 1 {
		return wire.LeakReport{}, fmt.Errorf("leaks: iterations must be at least 1, not %d", in.Iterations)
	}
	c := &comparison{in: in, f: in.Final, n: in.Iterations}
	defer c.endTree()
	// The retainer paths on another core, while this one groups the new
	// objects and measures the collections, which needs no paths.
	c.globals = globalObjects(c.f)
	d := newDriver(c.f, c.globals)
	var wg sync.WaitGroup
	wg.Go(func() { c.p = retainers(c.f, c.globals, d) })
	rep := wire.LeakReport{
		Iterations:  c.n,
		BytesBefore: in.Baseline.bytes,
		BytesAfter:  totalBytes(c.f),
		Leaks:       []wire.Leak{},
	}
	objects, detached := c.newObjects()
	collections := c.grownCollections()
	if len(objects)+len(detached)+len(collections) > 0 {
		c.beginTree(d) // their retained sizes will be wanted
	}
	wg.Wait()
	// What only the WebDriver machinery holds is not the page's, nor
	// what only the engine does.
	keep := func(i int) bool { return !c.p.driverHeld(i) && !c.p.engineHeld(i) }
	if in.PageOnly {
		keep = c.p.fromPage
	}
	c.keep(objects, keep)
	c.keep(detached, keep)
	c.keep(detached, c.detachedRoot)
	collections = slices.DeleteFunc(collections, func(g grownCollection) bool { return !keep(g.i) })
	if in.MemlabRules {
		c.memlabRules(objects, detached)
		collections = nil
	}
	// The nodes on the paths of reported groups: a collection that holds
	// a reported group grows because of it, and is not reported again.
	explained := map[int]bool{}
	rep.Leaks = c.groupLeaks(rep.Leaks, wire.LeakObjects, objects, explained)
	rep.Leaks = c.groupLeaks(rep.Leaks, wire.LeakDetachedDOM, detached, explained)
	rep.Leaks = c.collectionLeaks(rep.Leaks, collections, explained)
	rep.Leaks = c.listenerLeaks(rep.Leaks)
	if !in.MemlabRules {
		rep.Leaks = c.timerLeaks(rep.Leaks)
	}
	rep.Leaks = c.withoutRetained(rep.Leaks)
	Sort(rep.Leaks)
	return rep, nil
}

// A comparison is the state of Find: its input, the final snapshot and,
// once computed, the retainer paths in it.
type comparison struct {
	in Input
	f  *heapsnapshot.Snapshot
	n  int // iterations
	p  *paths
	r  *retained // computed when first needed (tree)
	// treeBegun, once beginTree made the tree on another goroutine,
	// brings it to tree or endTree.
	treeBegun chan *retained
	// members are the nodes of each reported leak, in the verdict's
	// order (for a collection, the collection; for listeners, their new
	// handlers).
	members [][]int
	globals []int // the page's and the workers' global objects
	// reachWithout caches pageReachWithout's searches, by leak.
	reachWithout map[int][]bool
}

// withoutRetained drops the leaks that another leak retains: every
// member dominated by a member of another leak, or reached from the
// page only through a listener's or timer's handlers (heldByHandlers;
// listener and timer groups stay).
// What a forgotten timer's closure holds (an object, its array, the
// array's rows) is that closure's leak, and a listener's big array the
// listener's, as memlab reports one trace for each; their bytes are in
// the retaining leak's retained size.
func (c *comparison) withoutRetained(leaks []wire.Leak) []wire.Leak {
	if c.r == nil || len(leaks) < 2 {
		return leaks
	}
	owner := map[int32]int{}
	for k, ms := range c.members {
		for _, m := range ms {
			owner[int32(m)] = k
		}
	}
	out := leaks[:0]
	for k, l := range leaks {
		// Listeners and timers are the engine's count, whatever holds
		// their handlers.
		if l.Kind == wire.LeakEventListeners || l.Kind == wire.LeakTimers || !c.retainedByOther(k, leaks, owner) {
			out = append(out, l)
		}
	}
	return out
}

// retainedByOther tells whether every member of leak k has, up its
// dominator tree, a member of another leak, or is held by a listener's
// or timer's handlers (heldByHandlers).
func (c *comparison) retainedByOther(k int, leaks []wire.Leak, owner map[int32]int) bool {
	if len(c.members[k]) == 0 {
		return false
	}
	for _, m := range c.members[k] {
		held := false
		for d, steps := c.r.idom[m], 0; d >= 0 && steps < maxDominatorWalk; d, steps = c.r.idom[d], steps+1 {
			if j, ok := owner[d]; ok && j != k {
				held = true
				break
			}
		}
		if !held && !c.heldByHandlers(k, leaks, m, owner) {
			return false
		}
	}
	return true
}

// tree is the final heap's dominator tree over strong edges other than
// the driver's, made when first needed or taken from beginTree.
func (c *comparison) tree() *retained {
	if c.r == nil && c.treeBegun != nil {
		c.r, c.treeBegun = <-c.treeBegun, nil
	}
	if c.r == nil {
		c.r = dominators(c.f, c.p.d.not(strongEdge))
	}
	return c.r
}

// beginTree makes the tree on another goroutine, beside the retainer
// search (the driver's edges, d, are all it needs of it).
func (c *comparison) beginTree(d *driver) {
	c.treeBegun = make(chan *retained, 1)
	go func(out chan<- *retained) { out <- dominators(c.f, d.not(strongEdge)) }(c.treeBegun) // owned by Find: tree or endTree takes it
}

// endTree waits for a tree that beginTree made and nothing took.
func (c *comparison) endTree() {
	if c.treeBegun != nil {
		<-c.treeBegun
	}
}

// retainedBy is the retained size of a set of the final heap's nodes
// (see retained.of).
func (c *comparison) retainedBy(members []int) int64 {
	if len(members) == 0 {
		return 0
	}
	return c.tree().of(members)
}

// createdFrom is where the members were made: createdFrom of their own
// stacks or, when those share no page frame (V8 lost or replaced them:
// see createdFrom), the page frame that allocated most of the bytes of
// the new nodes the members dominate, when it has more than half of the
// bytes that have a stack. Objects in V8's large-object space never move,
// so their stacks stay right: a listener's handler lost its own, the big
// array its closure holds names the function that made both.
func (c *comparison) createdFrom(members []int) *wire.LeakFrame {
	if fr := createdFrom(c.f, members); fr != nil || len(members) == 0 {
		return fr
	}
	r := c.tree()
	votes := map[wire.LeakFrame]int64{}
	var traced int64
	seen := map[int32]bool{}
	todo := make([]int32, 0, len(members))
	for _, m := range members {
		seen[int32(m)] = true
		todo = append(todo, int32(m))
	}
	for len(todo) > 0 && len(seen) < maxDominatedVisit {
		x := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, k := range r.dominated(x) {
			if seen[k] || !c.isNew(int(k)) {
				continue
			}
			seen[k] = true
			todo = append(todo, k)
			fr, has, ok := pageFrame(c.f, int(k))
			w := c.f.SelfSize(int(k))
			if has {
				traced += w
			}
			if ok {
				votes[fr] += w
			}
		}
	}
	return majority(votes, traced)
}

// maxDominatedVisit bounds the nodes createdFrom visits below a group.
const maxDominatedVisit = 1 << 16

// isNew says whether node i of the final snapshot is new: not in the
// baseline, and in the target if there is one.
func (c *comparison) isNew(i int) bool {
	id := c.f.ID(i)
	return !c.in.Baseline.Has(id) && (c.in.Target == nil || c.in.Target.Has(id))
}

// grows says whether a count that changed by delta grew with each
// iteration: by at least their number, and by a multiple of it.
func (c *comparison) grows(delta int64) bool {
	return delta >= int64(c.n) && delta%int64(c.n) == 0
}

// newObjects groups the new objects: JavaScript objects by class, and
// detached DOM nodes by name.
func (c *comparison) newObjects() (objects, detached map[string][]int) {
	objects, detached = map[string][]int{}, map[string][]int{}
	f := c.f
	for i := range f.NodeCount() {
		if !c.isNew(i) {
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
	return objects, detached
}

// A grownCollection is a collection whose entries grew.
type grownCollection struct {
	i            int
	kind         string
	count, bytes int64 // the growth
}

// grownCollections finds the collections present in both snapshots whose
// entries grew.
func (c *comparison) grownCollections() []grownCollection {
	var out []grownCollection
	f := c.f
	for i := range f.NodeCount() {
		kind, ok := collectionKind(f, i)
		if !ok {
			continue
		}
		c0, b0, ok := c.in.Baseline.collection(f.ID(i))
		if !ok {
			continue
		}
		c1, b1 := entries(f, i, kind)
		if n, ok := c.in.Entries[f.ID(i)]; ok {
			c1 = n
		}
		if c.grows(int64(c1 - c0)) {
			out = append(out, grownCollection{i, kind, int64(c1 - c0), b1 - b0})
		}
	}
	return out
}

// keep keeps in groups the members keep accepts.
func (c *comparison) keep(groups map[string][]int, keep func(int) bool) {
	for name, members := range groups {
		groups[name] = slices.DeleteFunc(members, func(m int) bool { return !keep(m) })
	}
}

// detachedRoot tells a new detached node that is not inside another new
// detached node (its path's last step comes from one): the root of a
// detached subtree, which retains the rest, so that a leaked dialog is
// one group and not one more for each kind of node in it, as memlab
// reports it.
func (c *comparison) detachedRoot(i int) bool {
	from := c.p.parent[i]
	return from < 0 || c.f.Detachedness(int(from)) != detachedNode || !c.isNew(int(from))
}

// groupLeaks appends to leaks the groups of kind that grew, and marks
// the nodes on their representatives' retainer paths explained.
func (c *comparison) groupLeaks(leaks []wire.Leak, kind string, groups map[string][]int, explained map[int]bool) []wire.Leak {
	for name, members := range groups {
		for _, cl := range c.clusters(members) {
			var bytes int64
			for _, m := range cl.members {
				bytes += c.f.SelfSize(m)
			}
			rep0 := c.p.representative(cl.members)
			for _, x := range c.p.nodes(rep0) {
				explained[x] = true
			}
			kept := c.retainedBy(cl.members)
			c.members = append(c.members, cl.members)
			leaks = append(leaks, wire.Leak{
				Kind: kind, Name: name,
				CountDelta: cl.per * int64(c.n), PerIteration: cl.per,
				BytesDelta:    bytes,
				RetainedBytes: kept, RetainedPerIteration: kept / int64(c.n),
				RetainerPath: c.p.path(rep0),
				CreatedFrom:  c.createdFrom(cl.members),
			})
		}
	}
	return leaks
}

// collectionLeaks appends to leaks the grown collections that no
// reported group explains.
func (c *comparison) collectionLeaks(leaks []wire.Leak, collections []grownCollection, explained map[int]bool) []wire.Leak {
	for _, g := range collections {
		if explained[g.i] {
			continue
		}
		kept := c.retainedBy(c.newEntries(g.i)) + g.bytes
		c.members = append(c.members, []int{g.i})
		leaks = append(leaks, wire.Leak{
			Kind: wire.LeakCollection, Name: collectionName(c.f, c.p, g.i, g.kind),
			CountDelta: g.count, PerIteration: g.count / int64(c.n),
			BytesDelta:    g.bytes,
			RetainedBytes: kept, RetainedPerIteration: kept / int64(c.n),
			RetainerPath: c.p.path(g.i),
			CreatedFrom:  c.createdFrom([]int{g.i}),
		})
	}
	return leaks
}

// listenerLeaks appends to leaks the event listeners, as the engine
// counted them, whose number grew: by target and event type, created
// where most of their new handlers were.
func (c *comparison) listenerLeaks(leaks []wire.Leak) []wire.Leak {
	if c.in.ListenersAfter == nil {
		return leaks
	}
	count := map[string]int64{}
	for _, l := range c.in.ListenersBefore {
		count[l.Target+" "+l.Type]--
	}
	handlers := map[string][]int{}
	target := map[string]string{}
	unnamed := map[string]bool{} // groups with a listener whose handler the engine did not name
	byID := nodesOf(c.f, c.in.ListenersAfter)
	for _, l := range c.in.ListenersAfter {
		k := l.Target + " " + l.Type
		count[k]++
		target[k] = l.Target
		if l.HandlerID == 0 {
			unnamed[k] = true
		}
		if j, ok := byID[l.HandlerID]; ok && l.HandlerID != 0 && c.isNew(j) {
			handlers[k] = append(handlers[k], j)
		}
	}
	// A target whose one grown group has handlers the engine did not
	// name: the new functions the target holds are that group's.
	grownUnnamed := map[string][]string{}
	for name, delta := range count {
		if c.grows(delta) && unnamed[name] && len(handlers[name]) == 0 {
			grownUnnamed[target[name]] = append(grownUnnamed[target[name]], name)
		}
	}
	for t, names := range grownUnnamed {
		if len(names) == 1 {
			handlers[names[0]] = c.unnamedHandlers(t)
		}
	}
	for name, delta := range count {
		if !c.grows(delta) {
			continue
		}
		path := []string{}
		if hs := handlers[name]; len(hs) > 0 {
			path = c.p.path(c.p.representative(hs))
		}
		kept := c.retainedBy(handlers[name])
		c.members = append(c.members, handlers[name])
		leaks = append(leaks, wire.Leak{
			Kind: wire.LeakEventListeners, Name: name,
			CountDelta: delta, PerIteration: delta / int64(c.n),
			RetainedBytes: kept, RetainedPerIteration: kept / int64(c.n),
			RetainerPath: path,
			CreatedFrom:  c.createdFrom(handlers[name]),
		})
	}
	return leaks
}

// newEntries are the new nodes a collection holds: its own edges' and
// its backing store's (elements, properties, hash table) targets.
func (c *comparison) newEntries(i int) []int {
	var out []int
	add := func(from int) {
		for e := range c.f.Edges(from) {
			if e.Type != "weak" && e.Name != "__proto__" && c.isNew(e.To) && c.f.Type(e.To) != "array" {
				out = append(out, e.To)
			}
		}
	}
	add(i)
	for e := range c.f.Edges(i) {
		if e.Type == "internal" && (e.Name == "elements" || e.Name == "properties" || e.Name == "table") {
			add(e.To)
		}
	}
	return out
}

// kindOrder is the order of kinds in a report.
var kindOrder = []string{wire.LeakObjects, wire.LeakDetachedDOM, wire.LeakCollection, wire.LeakEventListeners, wire.LeakTimers}

// Sort orders leaks by kind (objects, detached DOM, collections, event
// listeners, timers), then by bytes and count, largest first, then by name.
func Sort(l []wire.Leak) {
	slices.SortFunc(l, func(a, b wire.Leak) int {
		return cmp.Or(
			cmp.Compare(slices.Index(kindOrder, a.Kind), slices.Index(kindOrder, b.Kind)),
			cmp.Compare(b.BytesDelta, a.BytesDelta),
			cmp.Compare(b.CountDelta, a.CountDelta),
			cmp.Compare(a.Name, b.Name),
			slices.Compare(a.RetainerPath, b.RetainerPath))
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
