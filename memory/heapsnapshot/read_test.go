package heapsnapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/wdext/wdext/memory/heapsnapshot/heapsnapshottest"
	"github.com/wdext/wdext/wire"
)

// node is everything the accessors say about one node, for comparisons.
type node struct {
	Type, Name string
	ID         uint32
	Size       int64
	Trace      uint32
	Class      string
	IsObject   bool
	Edges      []Edge
}

func dump(s *Snapshot) []node {
	var ns []node
	for i := range s.NodeCount() {
		n := node{Type: s.Type(i), Name: s.Name(i), ID: s.ID(i), Size: s.SelfSize(i), Trace: s.TraceNodeID(i)}
		n.Class, n.IsObject = s.ClassName(i)
		n.Edges = slices.Collect(s.Edges(i))
		if len(n.Edges) != s.EdgeCount(i) || s.NodeTypes()[s.TypeIndex(i)] != n.Type {
			panic("accessors disagree")
		}
		ns = append(ns, n)
	}
	return ns
}

func readFile(t testing.TB, name string) (*Snapshot, []byte) {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	assert.NilError(t, err)
	s, err := Read(bytes.NewReader(data))
	assert.NilError(t, err)
	return s, data
}

func TestReadSmall(t *testing.T) {
	s, _ := readFile(t, "small.heapsnapshot")
	assert.Equal(t, s.NodeCount(), 19)
	assert.Equal(t, s.TotalEdges(), 12)
	ns := dump(s)
	assert.DeepEqual(t, ns[0], node{Type: "synthetic", ID: 1, Edges: []Edge{
		{Type: "element", Index: 1, To: 1},
		{Type: "shortcut", Name: "Foo", Index: -1, To: 4},
	}})
	assert.DeepEqual(t, ns[4], node{Type: "object", Name: "Foo", ID: 9, Size: 32, Class: "Foo", IsObject: true, Edges: []Edge{
		{Type: "property", Name: "next", Index: -1, To: 3},
		{Type: "property", Name: "greeting", Index: -1, To: 8},
		{Type: "internal", Name: "elements", Index: -1, To: 7},
	}})
	for i, want := range map[int]string{5: "Function", 6: "RegExp", 17: "Array", 2: "Object"} {
		got, ok := s.ClassName(i)
		assert.Check(t, ok)
		assert.Check(t, is.Equal(got, want))
	}
	for _, i := range []int{0, 7, 8, 10, 11, 14} {
		_, ok := s.ClassName(i)
		assert.Check(t, !ok, "node %d (%s) is not a JS object", i, s.Type(i))
	}
	// \u escapes, a surrogate pair and raw characters all decode.
	assert.Equal(t, s.Name(18), "caf\u00e9 \U0001F600 \"q\" \\ \n\t/")
	_, ok := s.Stack(0)
	assert.Check(t, !ok)
}

// ReadNodes gives the same nodes as Read, and their edge counts, without
// their edges.
func TestReadNodes(t *testing.T) {
	for _, name := range []string{"small.heapsnapshot", "reordered.heapsnapshot", "traced.heapsnapshot"} {
		s, data := readFile(t, name)
		nodes, err := ReadNodes(bytes.NewReader(data))
		assert.NilError(t, err)
		assert.Equal(t, nodes.TotalEdges(), 0)
		want, got := dump(s), dumpNodes(nodes)
		for i := range want {
			assert.Equal(t, nodes.EdgeCount(i), len(want[i].Edges))
			want[i].Edges = nil
		}
		assert.DeepEqual(t, got, want)
	}
}

// dumpNodes is dump for a snapshot ReadNodes read: no edges.
func dumpNodes(s *Snapshot) []node {
	ns := make([]node, s.NodeCount())
	for i := range ns {
		ns[i] = node{Type: s.Type(i), Name: s.Name(i), ID: s.ID(i), Size: s.SelfSize(i), Trace: s.TraceNodeID(i)}
		ns[i].Class, ns[i].IsObject = s.ClassName(i)
		for range s.Edges(i) {
			panic("ReadNodes kept an edge")
		}
	}
	return ns
}

// The reordered file has the same graph as small.heapsnapshot, with other
// node and edge field orders, other type name orders, an extra node field,
// "strings" first, edges before nodes and unknown keys.
func TestReadReordered(t *testing.T) {
	small, _ := readFile(t, "small.heapsnapshot")
	reordered, _ := readFile(t, "reordered.heapsnapshot")
	assert.DeepEqual(t, dump(reordered), dump(small))
}

func TestReadTraced(t *testing.T) {
	s, _ := readFile(t, "traced.heapsnapshot")
	app := "http://x/app.js"
	f := wire.Frame{FunctionDisplayName: "f", Source: app, SourceID: 42, Line: 10, Column: 5}
	g := wire.Frame{FunctionDisplayName: "g", Source: app, SourceID: 42, Line: 20, Column: 3}
	h := wire.Frame{FunctionDisplayName: "h", Source: "http://x/lib.js", SourceID: 43, Line: 1, Column: 1}
	for id, want := range map[uint32][]wire.Frame{1: {}, 2: {f}, 3: {g, f}, 4: {h}} {
		got, ok := s.Stack(id)
		assert.Check(t, ok)
		assert.Check(t, is.DeepEqual(got, want), "trace node %d", id)
	}
	for _, id := range []uint32{0, 5} {
		_, ok := s.Stack(id)
		assert.Check(t, !ok)
	}
	var traces []uint32
	for i := range s.NodeCount() {
		traces = append(traces, s.TraceNodeID(i))
	}
	assert.DeepEqual(t, traces, []uint32{0, 0, 3, 3, 4, 1, 0, 2})
}

// Chunk boundaries must not matter: CDP hands the snapshot over in pieces.
func TestReadChunked(t *testing.T) {
	for _, name := range []string{"small.heapsnapshot", "reordered.heapsnapshot", "traced.heapsnapshot"} {
		want, data := readFile(t, name)
		readers := map[string]func() io.Reader{
			"one byte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) },
			"half":     func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
			"data+err": func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) },
			"pipe": func() io.Reader {
				pr, pw := io.Pipe()
				go func() {
					rnd := rand.New(rand.NewPCG(1, 2))
					for rest := data; len(rest) > 0; {
						n := min(len(rest), 1+rnd.IntN(7))
						if _, err := pw.Write(rest[:n]); err != nil {
							return
						}
						rest = rest[n:]
					}
					pw.Close()
				}()
				return pr
			},
		}
		for how, r := range readers {
			got, err := Read(r())
			assert.NilError(t, err, "%s, %s", name, how)
			assert.DeepEqual(t, dump(got), dump(want))
		}
	}
}

func TestReadTruncated(t *testing.T) {
	for _, name := range []string{"small.heapsnapshot", "reordered.heapsnapshot", "traced.heapsnapshot"} {
		_, data := readFile(t, name)
		data = bytes.TrimSpace(data)
		for n := range len(data) {
			_, err := Read(bytes.NewReader(data[:n]))
			assert.Assert(t, err != nil, "%s cut to %d bytes", name, n)
		}
	}
}

func TestReadMalformed(t *testing.T) {
	_, small := readFile(t, "small.heapsnapshot")
	_, traced := readFile(t, "traced.heapsnapshot")
	edit := func(data []byte, old, new string) string {
		assert.Assert(t, bytes.Count(data, []byte(old)) == 1, "%q must occur once", old)
		return strings.Replace(string(data), old, new, 1)
	}
	deep := `{"x":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`
	// ReadNodes keeps no edge to tell which one is wrong.
	nodesWant := map[string]string{"edge name range": "edge's name 99 out of range of 23 strings"}
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "unexpected EOF"},
		{"not an object", "[]", `want '{', got '['`},
		{"trailing data", string(small) + "{}", "data after the top-level object"},
		{"no header", `{"strings":[]}`, "no snapshot header"},
		{"nodes before header", `{"nodes":[],"snapshot":{}}`, `"nodes" before the snapshot header`},
		{"header not an object", `{"snapshot":[1]}`, "snapshot header"},
		{"node_count", edit(small, `"node_count":19`, `"node_count":20`), "19 nodes, header says 20"},
		{"edge_count", edit(small, `"edge_count":12`, `"edge_count":11`), "12 edges, header says 11"},
		{"edge counts", edit(small, "\n3,4,9,32,3,0,", "\n3,4,9,32,4,0,"), "edge_count adds up to"},
		{"to_node multiple", edit(small, "[1,1,6,", "[1,1,7,"), "not a multiple of 6"},
		{"to_node range", edit(small, "[1,1,6,", "[1,1,600,"), "to_node 100 out of range"},
		{"name range", edit(small, "[9,1,1,0,2,0,", "[9,99,1,0,2,0,"), "name 99 out of range of 23 strings"},
		{"edge name range", edit(small, "\n2,15,72,", "\n2,99,72,"), "edge 3: name 99 out of range"},
		{"type range", edit(small, "[9,1,1,0,2,0,", "[15,1,1,0,2,0,"), "node 0: type 15 out of range"},
		{"fraction", edit(small, "[9,1,1,0,2,0,", "[9,1.5,1,0,2,0,"), "fraction"},
		{"negative", edit(small, "[9,1,1,0,2,0,", "[9,1,1,-4,2,0,"), "negative self_size"},
		{"huge", edit(small, "[9,1,1,0,2,0,", "[9,1,99999999999999999999,0,2,0,"), "out of range"},
		{"leading zero", edit(small, "[9,1,1,0,2,0,", "[9,01,1,0,2,0,"), "leading zero"},
		{"short node", edit(small, "2,20,37,40,0,0]", "2,20,37,40,0]"), "array ends inside a record of 6 integers"},
		{"missing comma", edit(small, "[9,1,1,0,2,0,", "[9 1,1,0,2,0,"), "want ',' or ']'"},
		{"duplicate key", edit(small, `"samples":[]`, `"nodes":[]`), `duplicate "nodes"`},
		{"missing field", edit(small, `"id","self_size","edge_count","detachedness"]`, `"ID","self_size","edge_count","detachedness"]`), `node_fields lacks "id"`},
		{"twice field", edit(small, `"id","self_size","edge_count","detachedness"]`, `"id","self_size","edge_count","id"]`), `lists "id" twice`},
		{"bad escape", edit(small, `"hello"`, `"hel\lo"`), "invalid escape"},
		{"control char", edit(small, `"hello"`, "\"hel\x01lo\""), "control character"},
		{"bad literal", edit(small, `"samples":[]`, `"samples":[nul]`), "invalid literal"},
		{"bad number", edit(small, `"samples":[]`, `"samples":[1.]`), "invalid value"},
		{"deep", deep, "nesting deeper than"},
		{"header too large", `{"snapshot":{"pad":"` + strings.Repeat("x", 2<<20) + `"}}`, "snapshot header too large"},
		{"trace function index", edit(traced, "[3,2,2,20,[]]", "[3,9,2,20,[]]"), "function_info_index 9 out of range of 4"},
		{"trace id twice", edit(traced, "[3,2,2,20,[]]", "[2,2,2,20,[]]"), "trace node id 2 appears twice"},
		{"trace node short", edit(traced, "[3,2,2,20,[]]", "[3,2,2,20]"), "trace_tree ends inside a node"},
		{"trace children not array", edit(traced, "[3,2,2,20,[]]", "[3,2,2,20,7]"), "want '['"},
		{"no trace fields", edit(traced, `"trace_node_fields":["id","function_info_index","count","size","children"],`, ""), `trace_node_fields lacks`},
		{"trace function string", edit(traced, "\n3,5,7,43,1,1]", "\n3,5,77,43,1,1]"), "trace function 3: string out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.in))
			assert.ErrorContains(t, err, tc.want)
			// ReadNodes refuses all the same.
			want, ok := nodesWant[tc.name]
			if !ok {
				want = tc.want
			}
			_, err = ReadNodes(strings.NewReader(tc.in))
			assert.ErrorContains(t, err, want)
		})
	}
}

type stuckReader struct{}

func (stuckReader) Read([]byte) (int, error) { return 0, nil }

func TestReadNoProgress(t *testing.T) {
	_, err := Read(io.MultiReader(strings.NewReader(`{"snapshot":`), stuckReader{}))
	assert.Check(t, errors.Is(err, io.ErrNoProgress), "%v", err)
}

func TestReadReaderError(t *testing.T) {
	_, small := readFile(t, "small.heapsnapshot")
	boom := errors.New("boom")
	pr, pw := io.Pipe()
	go func() {
		pw.Write(small[:len(small)/2])
		pw.CloseWithError(boom)
	}()
	_, err := Read(pr)
	assert.Check(t, errors.Is(err, boom), "%v", err)
}

// Strings decode exactly as encoding/json decodes them, whatever the escapes
// and wherever the chunk boundaries fall.
func TestReadStringsLikeEncodingJSON(t *testing.T) {
	table := `["", "plain", "\u00e9\u4e2d", "\ud83d\ude00", "\ud83d", "\ude00x", "\ud83d\u0041",
		"\ud83d\ud83d\ude00", "tab\there", "\"\\\/\b\f\n\r\t", "raw é 中 😀", "\u0000"]`
	in := `{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count"],` +
		`"node_types":[["x"]],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["e"]]}},` +
		`"strings":` + table + `}`
	var want []string
	assert.NilError(t, json.Unmarshal([]byte(table), &want))
	s, err := Read(iotest.OneByteReader(strings.NewReader(in)))
	assert.NilError(t, err)
	assert.DeepEqual(t, s.strings, want)
}

// detachedness is an optional column, like trace_node_id: kept when the
// snapshot has it, 0 when not.
func TestReadDetachedness(t *testing.T) {
	s, _ := readFile(t, "small.heapsnapshot")
	for i := range s.NodeCount() {
		assert.Equal(t, s.Detachedness(i), uint8(0))
	}
	var g heapsnapshottest.Graph
	g.Node("synthetic", "", 1, 0)
	g.Node("native", `<div class="dialog">`, 3, 100)
	g.Node("native", "<p>", 5, 100)
	g.Detach(1, 2)
	g.Detach(2, 1)
	var b bytes.Buffer
	_, err := g.WriteTo(&b)
	assert.NilError(t, err)
	s, err = Read(&b)
	assert.NilError(t, err)
	assert.DeepEqual(t, []uint8{s.Detachedness(0), s.Detachedness(1), s.Detachedness(2)}, []uint8{0, 2, 1})
}
