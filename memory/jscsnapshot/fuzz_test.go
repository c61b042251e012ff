package jscsnapshot

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"testing/iotest"
)

// FuzzRead checks that Read never panics, accepts only valid JSON, agrees
// with encoding/json on the nodes and class names it accepts, and that a
// snapshot it accepts can be walked entirely through the accessors.
func FuzzRead(f *testing.F) {
	// The real snapshot cut down to 40 nodes and their edges: whole
	// snapshots make every run too slow to fuzz well.
	data, err := os.ReadFile(minibrowser)
	if err != nil {
		f.Fatal(err)
	}
	var small struct {
		Version        int      `json:"version"`
		Type           string   `json:"type"`
		Nodes          []uint64 `json:"nodes"`
		NodeClassNames []string `json:"nodeClassNames"`
		Edges          []uint64 `json:"edges"`
		EdgeTypes      []string `json:"edgeTypes"`
		EdgeNames      []string `json:"edgeNames"`
	}
	if err := json.Unmarshal(data, &small); err != nil {
		f.Fatal(err)
	}
	small.Nodes, small.Edges = small.Nodes[:40*nodeFields], small.Edges[:40*edgeFields]
	if data, err = json.Marshal(small); err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add([]byte(`{"version":3,"type":"Inspector","nodes":[0,0,0,0,1,16,1,1,2,24,2,2,3,8,3,0],` +
		`"nodeClassNames":["<root>","Structure","Foo","BigInt"],"edges":[0,1,0,0,2,1,1,0],` +
		`"edgeTypes":["Internal","Property","Index","Variable"],"edgeNames":["x"]}`))
	f.Add([]byte(`{"nodeClassNames":["\ud83d\ude00\u00e9"],"version":1,"nodes":[ 0 , 0 , 0 , 0 ]}`))

	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON")
		}
		var m map[string]json.RawMessage
		var v struct {
			nodes []uint64
			names []string
		}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("encoding/json rejects what Read accepts: %v", err)
		}
		if json.Unmarshal(m["nodes"], &v.nodes) != nil || json.Unmarshal(m["nodeClassNames"], &v.names) != nil {
			t.Fatalf("encoding/json rejects the nodes or class names Read accepts")
		}
		if !slices.Equal(v.names, s.ClassNames()) || len(v.nodes) != nodeFields*s.NodeCount() {
			t.Fatalf("Read and encoding/json disagree: %q vs %q, %d vs %d nodes", s.ClassNames(), v.names, s.NodeCount(), len(v.nodes)/nodeFields)
		}
		for i := range s.NodeCount() {
			n := v.nodes[nodeFields*i:]
			if s.ID(i) != n[0] || uint64(s.SelfSize(i)) != n[1] || uint64(s.ClassIndex(i)) != n[2] || uint64(s.Flags(i)) != n[3] {
				t.Fatalf("node %d: Read and encoding/json disagree", i)
			}
			_, _, _ = s.ClassName(i), s.IsInternal(i), s.IsObject(i)
		}
		// Chunking must not change the outcome.
		s2, err := Read(iotest.OneByteReader(bytes.NewReader(data)))
		if err != nil || s2.NodeCount() != s.NodeCount() || s2.TotalEdges() != s.TotalEdges() {
			t.Fatalf("one byte at a time: %v", err)
		}
		// ReadGraph accepts less (edges must resolve), and whatever it
		// accepts has as many edges as Read counted, each in range.
		if g, err := ReadGraph(bytes.NewReader(data)); err == nil {
			edges := 0
			for i := range g.NodeCount() {
				for e := range g.Edges(i) {
					if e.To < 0 || e.To >= g.NodeCount() {
						t.Fatalf("edge to %d of %d nodes", e.To, g.NodeCount())
					}
					edges++
				}
			}
			if edges != s.TotalEdges() {
				t.Fatalf("ReadGraph has %d edges, Read counted %d", edges, s.TotalEdges())
			}
		}
	})
}
