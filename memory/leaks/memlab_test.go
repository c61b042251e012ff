package leaks

import (
	"testing"

	"gotest.tools/v3/assert"
)

// With memlab's rules (one iteration's snapshots), only detached DOM
// nodes and unmounted React fibers are leaks: new objects of other
// classes and grown collections are not, nor a detached node that a
// fiber keeps as its stateNode, nor a fiber still in the tree.
func TestMemlabRules(t *testing.T) {
	b := newPage(0)
	f := newPage(0)
	g := f.g
	f.add("Foo", 5, 0) // new objects, and the store grew

	// A detached dialog the page keeps.
	dialog := g.Node("native", `<div class="dialog">`, 5001, 130)
	g.Detach(dialog, 2)
	g.Element(f.store, "element", 5, dialog)

	// The mounted tree: root fiber → FiberRootNode, a child whose return
	// is the root, holding its detached host node by stateNode.
	rootNode := g.Node("object", "FiberRootNode", 5003, 40)
	hostRoot := g.Node("object", "FiberNode", 5005, 100)
	g.Edge(hostRoot, "property", "stateNode", rootNode)
	child := g.Node("object", "FiberNode", 5007, 100)
	g.Edge(child, "property", "return", hostRoot)
	kept := g.Node("native", `<span class="last">`, 5009, 100)
	g.Detach(kept, 2)
	g.Edge(child, "property", "stateNode", kept)
	g.Edge(f.window, "property", "__reactRoot", rootNode)
	g.Edge(rootNode, "property", "current", hostRoot)
	g.Edge(hostRoot, "property", "child", child)

	// An unmounted subtree the page keeps: its top's return is gone.
	top := g.Node("object", "FiberNode", 5011, 100)
	below := g.Node("object", "FiberNode", 5013, 100)
	g.Edge(below, "property", "return", top)
	g.Edge(top, "property", "child", below)
	g.Edge(f.window, "property", "lastPanel", top)

	in := Input{Baseline: sum(t, b.g), Final: build(t, g), Iterations: 1}
	assert.DeepEqual(t, names(find(t, in)), []string{
		"objects FiberNode", "objects Foo", "objects FiberRootNode", "detached-dom div.dialog",
	})

	in.MemlabRules = true
	r := find(t, in)
	assert.DeepEqual(t, names(r), []string{"objects FiberNode", "detached-dom div.dialog"})
	for _, l := range r.Leaks {
		if l.Name == "FiberNode" {
			assert.Equal(t, l.CountDelta, int64(2)) // top and below, not the mounted two
		}
	}
}
