package census

import (
	"testing"

	"github.com/wdext/wdext/memory/heap"
	"github.com/wdext/wdext/memory/heapsnapshot"
	"gotest.tools/v3/assert"
)

// TestV8 checks the adapter against the snapshot's own accessors.
func TestV8(t *testing.T) {
	snaps := []*heapsnapshot.Snapshot{read(t, "small.heapsnapshot"), read(t, "traced.heapsnapshot"), read(t, "reordered.heapsnapshot")}
	if !testing.Short() {
		s, _ := generated()
		snaps = append(snaps, s)
	}
	for _, s := range snaps {
		h := V8(s)
		assert.Equal(t, h.NodeCount(), s.NodeCount())
		nodes := make([]heap.Node, s.NodeCount())
		h.Nodes(0, nodes)
		for i, n := range nodes {
			class, ok := h.ClassName(i)
			wantClass, wantOK := s.ClassName(i)
			if n != (heap.Node{Size: s.SelfSize(i), Kind: int32(s.TypeIndex(i)), Trace: s.TraceNodeID(i)}) ||
				h.Kinds()[n.Kind].Name != s.Type(i) || class != wantClass || ok != wantOK {
				t.Fatalf("node %d: %+v %q %v", i, n, class, ok)
			}
		}
	}
	assert.Equal(t, V8(nil), nil)
}
