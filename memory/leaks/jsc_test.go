package leaks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/memory/jscsnapshot"
)

// jscHeap writes a small JavaScriptCore heap snapshot (version 3): cells
// by id, with their class, and edges between them.
type jscHeap struct {
	nodes []any // id, size, class index, flags
	edges []any // from id, to id, type index, data
	class []string
	names []string
}

var jscEdgeTypes = []string{"Internal", "Property", "Index", "Variable"}

func (h *jscHeap) node(id int, class string, flags jscsnapshot.Flags) {
	k := -1
	for i, c := range h.class {
		if c == class {
			k = i
		}
	}
	if k < 0 {
		k = len(h.class)
		h.class = append(h.class, class)
	}
	h.nodes = append(h.nodes, id, 32, k, int(flags))
}

func (h *jscHeap) edge(from, to int, typ string, name any) {
	t := strings.Index(strings.Join(jscEdgeTypes, ","), typ)
	t = strings.Count(strings.Join(jscEdgeTypes, ",")[:t], ",")
	data := 0
	switch v := name.(type) {
	case string:
		data = len(h.names)
		h.names = append(h.names, v)
	case int:
		data = v
	}
	h.edges = append(h.edges, from, to, t, data)
}

func (h *jscHeap) read(t *testing.T) *jscsnapshot.Snapshot {
	t.Helper()
	b, err := json.Marshal(map[string]any{"version": 3, "type": "Inspector", "nodes": h.nodes,
		"nodeClassNames": h.class, "edges": h.edges, "edgeTypes": jscEdgeTypes, "edgeNames": h.names})
	assert.NilError(t, err)
	s, err := jscsnapshot.ReadGraph(strings.NewReader(string(b)))
	assert.NilError(t, err)
	return s
}

// jscPage is a heap of a page: the current global (1, behind the window
// proxy 2) with store = [Foo…] and cache = Map 5; a previous document's
// global (3) still in the heap; TypeError (6) made on first use.
func jscPage(foos, rootOnly int, typeErrorMade bool) *jscHeap {
	h := &jscHeap{}
	h.node(0, "<root>", 0)
	h.node(1, "Window", 0)
	h.node(2, "JSWindowProxy", 0)
	h.node(3, "Window", 0)
	h.node(4, "Array", 0)
	h.node(5, "Map", 0)
	h.node(7, "Array", 0)
	h.edge(0, 2, "Internal", 0)
	h.edge(0, 3, "Internal", 0)
	h.edge(2, 1, "Internal", 0)
	h.edge(1, 4, "Property", "store")
	h.edge(1, 5, "Property", "cache")
	h.edge(3, 5, "Property", "cache")
	h.edge(0, 7, "Internal", 0) // a stale stack word
	for k := range foos {
		h.node(100+k, "Foo", jscsnapshot.ObjectSubtype)
		h.edge(4, 100+k, "Index", k)
	}
	for k := range rootOnly {
		h.node(1000+k, "Object", jscsnapshot.ObjectSubtype)
		h.edge(7, 1000+k, "Index", k)
	}
	if typeErrorMade {
		h.node(6, "Function", 0)
		h.node(8, "Object", jscsnapshot.ObjectSubtype)
		h.edge(1, 6, "Property", "TypeError")
		h.edge(6, 8, "Property", "prototype")
		for k := range 4 { // and 4 more made with it: 5 in all
			h.node(2000+k, "Function", 0)
			h.node(3000+k, "Object", jscsnapshot.ObjectSubtype)
			h.edge(1, 2000+k, "Internal", 0)
			h.edge(2000+k, 3000+k, "Property", "prototype")
		}
	}
	return h
}

// The leak check on JavaScriptCore's snapshots: the objects the page
// holds and that grew by a multiple of the iterations are reported with
// their path; garbage only the root holds (a conservative stack scan),
// and the built-in prototypes JSC makes on first use, are not.
func TestFindJSC(t *testing.T) {
	const n = 5
	base, err := FromJSC(jscPage(3, 0, false).read(t), nil)
	assert.NilError(t, err)
	final, err := FromJSC(jscPage(3+3*n, 200, true).read(t), nil)
	assert.NilError(t, err)
	rep, err := Find(Input{Baseline: SummarizeEntries(base, Entries{5: 1}), Final: final, Iterations: n,
		Entries: Entries{5: 1 + 2*n}, PageOnly: true})
	assert.NilError(t, err)
	var got []string
	for _, l := range rep.Leaks {
		got = append(got, fmt.Sprintf("%s %s %d/%d %s", l.Kind, l.Name, l.CountDelta, l.PerIteration, strings.Join(l.RetainerPath, " → ")))
	}
	assert.DeepEqual(t, got, []string{
		"objects Foo 15/3 Window → store (property) → Array → [3] (element) → Foo",
		"collection Window.cache (Map) 10/2 Window → cache (property) → Map",
	})

	// Without PageOnly (V8's precise collector), the root's garbage counts.
	rep, err = Find(Input{Baseline: Summarize(base), Final: final, Iterations: n})
	assert.NilError(t, err)
	assert.Equal(t, rep.Leaks[0].Name, "Object")
	assert.Equal(t, rep.Leaks[0].CountDelta, int64(200))
}
