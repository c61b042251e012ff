package heapsnapshot

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// FuzzRead checks that Read never panics or hangs, accepts only valid JSON,
// accepts what ReadNodes accepts, decodes strings as encoding/json does,
// and that a snapshot it accepts can be walked entirely through the
// accessors.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.heapsnapshot")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	f.Add([]byte(`{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count"],` +
		`"node_types":[["x"]],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["element"]]}},` +
		`"nodes":[0,0,1,0,1],"edges":[0,3,0],"strings":["\ud83d\ude00\u00e9"]}`))
	f.Add([]byte(`{"a":[1,-2.5e+3,true,false,null,{"b":"\n"}],"snapshot":{}}`))

	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Read(bytes.NewReader(data))
		nodes, nodesErr := ReadNodes(bytes.NewReader(data))
		if (err == nil) != (nodesErr == nil) {
			t.Fatalf("Read: %v; ReadNodes: %v", err, nodesErr)
		}
		if err != nil {
			return
		}
		if nodes.NodeCount() != s.NodeCount() || nodes.TotalEdges() != 0 {
			t.Fatalf("ReadNodes: %d nodes, %d edges; Read: %d nodes", nodes.NodeCount(), nodes.TotalEdges(), s.NodeCount())
		}
		walk(nodes)
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON")
		}
		if utf8.Valid(data) {
			var v struct{ Strings []string }
			if err := json.Unmarshal(data, &v); err == nil && v.Strings != nil && !slices.Equal(v.Strings, s.strings) {
				t.Fatalf("strings differ from encoding/json's: %q vs %q", s.strings, v.Strings)
			}
		}
		walk(s)
		// Chunking must not change the outcome.
		s2, err := Read(iotest.OneByteReader(bytes.NewReader(data)))
		if err != nil || s2.NodeCount() != s.NodeCount() || s2.TotalEdges() != s.TotalEdges() {
			t.Fatalf("one byte at a time: %v", err)
		}
	})
}

// walk calls every accessor on every node, edge and trace node.
func walk(s *Snapshot) {
	for i := range s.NodeCount() {
		_, _, _, _, _ = s.Type(i), s.Name(i), s.ID(i), s.SelfSize(i), s.EdgeCount(i)
		_, _ = s.ClassName(i)
		_, _ = s.Stack(s.TraceNodeID(i))
		for e := range s.Edges(i) {
			_ = e
		}
	}
	for id := range s.traceIndex {
		s.Stack(id)
	}
}
