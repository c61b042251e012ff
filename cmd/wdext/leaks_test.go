package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/memory/heapsnapshot/heapsnapshottest"
	"github.com/wdext/wdext/wire"
)

// writeHeap writes a small page heap: a Window with a "store" array
// holding objects of the classes given, with heap object ids from id.
func writeHeap(t *testing.T, path string, objects map[string][2]uint32) {
	t.Helper()
	var g heapsnapshottest.Graph
	root := g.Node("synthetic", "", 1, 0)
	win := g.Node("object", "Window / https://a.test", 3, 64)
	g.Element(root, "element", 1, win)
	store := g.Node("object", "Array", 5, 16)
	g.Edge(win, "property", "store", store)
	g.Trace(1, 0, "(root)", "", 0, 0)
	g.Trace(2, 1, "makeThings", "https://a.test/app.js", 12, 5)
	k := 0
	for _, class := range []string{"Foo", "Bar", "Baz"} {
		r, ok := objects[class]
		if !ok {
			continue
		}
		for id := r[0]; id < r[1]; id += 2 {
			o := g.Node("object", class, id, 24)
			g.Allocated(o, 2)
			g.Element(store, "element", k, o)
			k++
		}
	}
	f, err := os.Create(path)
	assert.NilError(t, err)
	defer f.Close()
	_, err = g.WriteTo(f)
	assert.NilError(t, err)
}

// wdext leaks applies memlab's three-snapshot method: leaked is what the
// target has and the baseline has not, and the final still has; with one
// iteration, memlab's rules judge (memory/leaks TestMemlabRules).
func TestLeaksCommand(t *testing.T) {
	dir := t.TempDir()
	b, tg, f := filepath.Join(dir, "b.heapsnapshot"), filepath.Join(dir, "t.heapsnapshot"), filepath.Join(dir, "f.heapsnapshot")
	writeHeap(t, b, nil)
	writeHeap(t, tg, map[string][2]uint32{"Foo": {101, 107}, "Bar": {201, 205}})
	// Bar was freed, Baz came after the target.
	writeHeap(t, f, map[string][2]uint32{"Foo": {101, 107}, "Baz": {301, 307}})

	out, errOut, code := run(t, 30*time.Second, "leaks", "--baseline", b, "--target", tg, "--final", f, "--iterations", "3")
	assert.Equal(t, code, 0, errOut)
	assert.Equal(t, out, `3 iteration(s); heap 80 B before, 224 B after

objects Foo: +3 (1 per iteration), 72 B, retaining 72 B (24 B per iteration)
  created in makeThings (https://a.test/app.js:12:5)
  held by Window → store (property) → Array → [0] (element) → Foo
`)

	// One iteration (the default): memlab's rules, which plain objects
	// do not meet.
	out, errOut, code = run(t, 30*time.Second, "leaks", "--baseline", b, "--target", tg, "--final", f)
	assert.Equal(t, code, 0, errOut)
	assert.Assert(t, strings.HasSuffix(out, "no leaks\n"), out)

	out, errOut, code = run(t, 30*time.Second, "leaks", "--baseline", b, "--final", f, "--iterations", "3", "--json")
	assert.Equal(t, code, 0, errOut)
	var r wire.LeakReport
	assert.NilError(t, json.Unmarshal([]byte(out), &r))
	assert.Equal(t, len(r.Leaks), 2, out) // without a target, Baz too
	assert.Equal(t, r.Leaks[0].PerIteration, int64(1))

	out, _, code = run(t, 30*time.Second, "leaks", "--baseline", b, "--final", b)
	assert.Equal(t, code, 0)
	assert.Assert(t, strings.HasSuffix(out, "no leaks\n"), out)

	_, errOut, code = run(t, 30*time.Second, "leaks", "--baseline", b)
	assert.Equal(t, code, 2, errOut)
	_, errOut, code = run(t, 30*time.Second, "leaks", "--baseline", b, "--final", filepath.Join(dir, "none"))
	assert.Equal(t, code, 1)
	assert.Assert(t, strings.Contains(errOut, "none"), errOut)
	_, errOut, code = run(t, 30*time.Second, "leaks", "--baseline", b, "--final", f, "--iterations", "0")
	assert.Equal(t, code, 1)
	assert.Assert(t, strings.Contains(errOut, "--iterations"), errOut)
}
