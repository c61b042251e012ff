package jscsnapshot

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// minibrowser is a snapshot from WebKitGTK 2.50.6's MiniBrowser of a page
// that ran
//
//	class Foo{}; window.foos=[]; for(let i=0;i<1000;i++) foos.push(new Foo());
//	window.big = new ArrayBuffer(10*1024*1024)
//
// with a cross-site iframe and a worker (in its own VM, so not here).
const minibrowser = "testdata/minibrowser-2.50.6.json"

func readFile(t testing.TB, name string) (*Snapshot, []byte) {
	t.Helper()
	data, err := os.ReadFile(name)
	assert.NilError(t, err)
	s, err := Read(bytes.NewReader(data))
	assert.NilError(t, err)
	return s, data
}

func TestReadMiniBrowser(t *testing.T) {
	s, _ := readFile(t, minibrowser)
	assert.Equal(t, s.Version(), 3)
	assert.Equal(t, s.NodeCount(), 5507)
	assert.Equal(t, s.TotalEdges(), 14139)
	assert.Equal(t, len(s.ClassNames()), 64)

	// Node 0 is the root.
	assert.Equal(t, s.ID(0), uint64(0))
	assert.Equal(t, s.ClassName(0), "<root>")
	assert.Equal(t, s.SelfSize(0), int64(0))
	assert.Equal(t, s.Flags(0), Flags(0))
	assert.Check(t, !s.IsObject(0))

	type class struct {
		Count, Internal, Objects, Subtype, Element int
		Bytes                                      int64
	}
	classes := map[string]*class{}
	ids := map[uint64]bool{}
	var total int64
	var big []int
	for i := range s.NodeCount() {
		c := classes[s.ClassName(i)]
		if c == nil {
			c = &class{}
			classes[s.ClassName(i)] = c
		}
		c.Count++
		c.Bytes += s.SelfSize(i)
		if s.IsInternal(i) {
			c.Internal++
		}
		if s.IsObject(i) {
			c.Objects++
		}
		if s.Flags(i)&ObjectSubtype != 0 {
			c.Subtype++
		}
		if s.Flags(i)&ElementSubtype != 0 {
			c.Element++
		}
		assert.Equal(t, s.ClassNames()[s.ClassIndex(i)], s.ClassName(i))
		ids[s.ID(i)] = true
		total += s.SelfSize(i)
		if s.SelfSize(i) >= 10<<20 {
			big = append(big, i)
		}
	}
	assert.Equal(t, len(ids), s.NodeCount(), "ids are unique")
	assert.Equal(t, total, int64(10_829_879))

	// The 1000 instances of Foo are named after their constructor.
	assert.DeepEqual(t, *classes["Foo"], class{Count: 1000, Objects: 1000, Subtype: 1000, Bytes: 64_000})
	assert.DeepEqual(t, *classes["Object"], class{Count: 9, Objects: 9, Subtype: 9, Bytes: 468})
	// window.big: its 10 MiB count in the cell's size.
	assert.Equal(t, len(big), 1)
	assert.Equal(t, s.ClassName(big[0]), "ArrayBuffer")
	assert.Check(t, s.IsObject(big[0]))
	assert.Equal(t, s.SelfSize(big[0]), int64(10<<20+128))

	// Unflagged and objects: functions, arrays, DOM wrappers, the globals.
	for _, name := range []string{"Function", "Array", "ArrayBuffer", "Window", "HTMLDocument", "JSGlobalLexicalEnvironment", "Symbol"} {
		c := classes[name]
		assert.Check(t, c.Internal == 0 && c.Objects == c.Count && c.Subtype == 0, "%s: %+v", name, *c)
	}
	// Unflagged but not objects: strings and BigInts, which JSC exempts.
	for _, name := range []string{"string", "BigInt"} {
		c := classes[name]
		assert.Check(t, c.Internal == 0 && c.Objects == 0, "%s: %+v", name, *c)
	}
	// Internal: JSC's own cells.
	for _, name := range []string{"Structure", "FunctionExecutable", "UnlinkedFunctionCodeBlock", "symbol", "PropertyTable", "GetterSetter"} {
		c := classes[name]
		assert.Check(t, c.Internal == c.Count && c.Objects == 0, "%s: %+v", name, *c)
	}
	assert.Check(t, is.Equal(classes["string"].Count, 969))
	// The two documents' wrappers are DOM nodes; HTMLDocument.prototype
	// (one per realm) is not.
	assert.DeepEqual(t, *classes["HTMLDocument"], class{Count: 4, Objects: 4, Element: 2, Bytes: 132})
}

// TestReadChunked checks that how the input arrives doesn't matter.
func TestReadChunked(t *testing.T) {
	want, data := readFile(t, minibrowser)
	for _, r := range []io.Reader{
		iotest.OneByteReader(bytes.NewReader(data)),
		iotest.HalfReader(bytes.NewReader(data)),
		iotest.DataErrReader(bytes.NewReader(data)),
	} {
		got, err := Read(r)
		assert.NilError(t, err)
		assert.Check(t, reflect.DeepEqual(got, want))
	}
}

func TestReadOrderAndSpace(t *testing.T) {
	// Members in another order, white space, unknown members, no "type"
	// (version 1 had none) and no edges at all.
	s, err := Read(strings.NewReader(` { "nodeClassNames" : [ "<root>" , "Foo" ] , "extra": {"a": [1, "x"]},
		"nodes" : [ 0 , 0 , 0 , 0 ,
		            7 , 24 , 1 , 2 ] , "version" : 1 } `))
	assert.NilError(t, err)
	assert.Equal(t, s.Version(), 1)
	assert.Equal(t, s.NodeCount(), 2)
	assert.Equal(t, s.TotalEdges(), 0)
	assert.Equal(t, s.ID(1), uint64(7))
	assert.Equal(t, s.SelfSize(1), int64(24))
	assert.Equal(t, s.ClassName(1), "Foo")
	assert.Check(t, s.IsObject(1))

	// Empty arrays, and the largest values each field takes.
	s, err = Read(strings.NewReader(`{"version":2,"type":"Inspector","nodes":[],"nodeClassNames":[],"edges":[]}`))
	assert.NilError(t, err)
	assert.Equal(t, s.NodeCount(), 0)
	s, err = Read(strings.NewReader(`{"version":3,"nodes":[18446744073709551615,9223372036854775807,0,255],"nodeClassNames":["x"]}`))
	assert.NilError(t, err)
	assert.Equal(t, s.ID(0), uint64(1<<64-1))
	assert.Equal(t, s.SelfSize(0), int64(1<<63-1))
	assert.Equal(t, s.Flags(0), Flags(255))
}

func TestReadErrors(t *testing.T) {
	data, err := os.ReadFile(minibrowser)
	assert.NilError(t, err)
	const (
		head  = `{"version":3,"type":"Inspector",`
		names = `"nodeClassNames":["<root>","Foo"]`
	)
	for _, tc := range []struct{ in, err string }{
		{``, "unexpected EOF"},
		{`   `, "unexpected EOF"},
		{string(data[:len(data)/2]), "unexpected EOF"},
		{string(data[:len(data)-1]), "unexpected EOF"},
		{string(data) + `{}`, "data after the snapshot"},
		{string(data) + `x`, "data after the snapshot"},
		{`[]`, "not a JSON object"},
		{`{"version":3,` + names + `,"nodes":[0,0,0,0],}`, "invalid character"},
		{`{"version":3,"type":"GCDebugging","nodes":[0,0,0,0,0,"0x0","0x0"],` + names + `}`, `type "GCDebugging" is not supported`},
		{`{"version":3,"type":"Heap",` + names + `}`, `type "Heap" is not supported`},
		{`{"version":3,"type":null,` + names + `}`, `type "" is not supported`},
		{`{"version":4,"type":"Inspector",` + names + `}`, "version 4 is not supported"},
		{`{"version":0,` + names + `}`, "version 0 is not supported"},
		{`{"version":2.5,` + names + `}`, "cannot unmarshal number 2.5"},
		{`{"version":"3",` + names + `}`, "cannot unmarshal string"},
		{`{"type":"Inspector","nodes":[],` + names + `}`, `no "version"`},
		{head + names + `}`, `no "nodes"`},
		{head + `"nodes":[]}`, `no "nodeClassNames"`},
		{head + `"nodes":[],"nodeClassNames":null}`, "nodeClassNames is not an array"},
		{head + `"nodes":[],"nodeClassNames":[1]}`, "cannot unmarshal number"},
		{head + `"nodes":null,` + names + `}`, "nodes is not an array"},
		{head + `"nodes":{},` + names + `}`, "nodes is not an array"},
		{head + `"nodes":[0,0,0],` + names + `}`, "nodes has 3 numbers, not a multiple of 4"},
		{head + `"nodes":[0,0,0,0,1,8,1],` + names + `}`, "nodes has 7 numbers, not a multiple of 4"},
		{head + `"nodes":[0,0,0,0,1,8,2,0],` + names + `}`, "node 1 (id 1): class index 2 out of range (2 nodeClassNames)"},
		{head + `"nodes":[0,0,0,0,1,8,4294967296,0],` + names + `}`, "nodes[6]: class index 4294967296 out of range"},
		{head + `"nodes":[0,0,0,0,1,-8,1,0],` + names + `}`, "nodes[5] is not a non-negative integer"},
		{head + `"nodes":[0,0,0,0,1,8.5,1,0],` + names + `}`, "nodes[5] is not a non-negative integer"},
		{head + `"nodes":[0,0,0,0,1,1e3,1,0],` + names + `}`, "nodes[5] is not a non-negative integer"},
		{head + `"nodes":[0,0,0,0,1,"8",1,0],` + names + `}`, "nodes[5] is not a non-negative integer"},
		{head + `"nodes":[0,0,0,0,1,[8],1,0],` + names + `}`, "nodes[5] is not a non-negative integer"},
		{head + `"nodes":[0,0,0,0,1,9223372036854775808,1,0],` + names + `}`, "nodes[5]: size 9223372036854775808 out of range"},
		{head + `"nodes":[0,0,0,0,1,8,1,256],` + names + `}`, "nodes[7]: flags 256 out of range"},
		{head + `"nodes":[18446744073709551616,0,0,0],` + names + `}`, "nodes[0] is out of range"},
		{head + `"nodes":[0,0,0,0],"nodes":[0,0,0,0],` + names + `}`, `duplicate "nodes"`},
		{head + `"nodes":[0,0,0,0],` + names + `,"edges":[1,2,0]}`, "edges has 3 numbers, not a multiple of 4"},
		{head + `"nodes":[0,0,0,0],` + names + `,"edges":[1,2,0,-1]}`, "edges[3] is not a non-negative integer"},
		{head + `"nodes":[0,0,0,0],` + names + `,"edges":"none"}`, "edges is not an array"},
	} {
		_, err := Read(strings.NewReader(tc.in))
		in := tc.in
		if len(in) > 80 {
			in = in[:80] + "..."
		}
		assert.ErrorContains(t, err, tc.err, in)
		assert.Check(t, strings.HasPrefix(err.Error(), "jscsnapshot: "), err)
	}
}

func TestReadReaderError(t *testing.T) {
	data, err := os.ReadFile(minibrowser)
	assert.NilError(t, err)
	boom := errors.New("boom")
	_, err = Read(io.MultiReader(bytes.NewReader(data[:1000]), iotest.ErrReader(boom)))
	assert.ErrorIs(t, err, boom)
}

// BenchmarkRead reports MB/s of the testdata snapshot, for comparison with
// heapsnapshot's BenchmarkRead.
func BenchmarkRead(b *testing.B) {
	data, err := os.ReadFile(minibrowser)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// ReadGraph keeps the edges: the real snapshot's window.foos is an Array
// of 1000 Foo, reached from the page's global object.
func TestReadGraph(t *testing.T) {
	data, err := os.ReadFile(minibrowser)
	assert.NilError(t, err)
	s, err := ReadGraph(bytes.NewReader(data))
	assert.NilError(t, err)
	assert.Equal(t, s.NodeCount(), 5507)
	assert.Check(t, s.HasEdges())
	edges := 0
	foos := -1
	for i := range s.NodeCount() {
		for e := range s.Edges(i) {
			edges++
			if e.Type == "Property" && e.Name == "foos" && s.ClassName(i) == "Window" {
				foos = e.To
			}
		}
	}
	assert.Equal(t, edges, s.TotalEdges())
	assert.Assert(t, foos > 0, "no Window.foos")
	assert.Equal(t, s.ClassName(foos), "Array")
	seen := map[int]bool{}
	for e := range s.Edges(foos) {
		if e.Type == "Index" {
			assert.Equal(t, s.ClassName(e.To), "Foo")
			assert.Equal(t, e.Name, "")
			seen[e.Index] = true
		} else {
			assert.Equal(t, e.Index, -1)
		}
	}
	assert.Equal(t, len(seen), 1000)
	assert.Check(t, seen[0] && seen[999])

	// Read keeps none.
	s, err = Read(bytes.NewReader(data))
	assert.NilError(t, err)
	assert.Check(t, !s.HasEdges())
	for range s.Edges(0) {
		t.Fatal("an edge without ReadGraph")
	}
}

func TestReadGraphErrors(t *testing.T) {
	const head = `{"version":3,"nodes":[0,0,0,0,7,16,1,0],"nodeClassNames":["<root>","Foo"],"edgeTypes":["Internal","Property","Index","Variable"],"edgeNames":["x"],`
	for _, c := range []struct{ in, err string }{
		{head + `"edges":[0,9,0,0]}`, "edge 0 points to node id 9, which is not in the snapshot"},
		{head + `"edges":[9,7,0,0]}`, "edge 0 leaves node id 9, which is not in the snapshot"},
		{head + `"edges":[0,7,4,0]}`, "edge 0: type index 4 out of range (4 edgeTypes)"},
		{head + `"edges":[0,7,1,1]}`, "edge 0: name index 1 out of range (1 edgeNames)"},
		{head + `"edges":[0,7,300,0]}`, "edges[2]: type index 300 out of range"},
		{`{"version":3,"nodes":[0,0,0,0,0,0,0,0],"nodeClassNames":["<root>"],"edges":[]}`, "two nodes have id 0"},
		{`{"version":3,"nodes":[0,0,0,0],"nodeClassNames":["<root>"],"edges":[0,0,0,0]}`, "edge 0: type index 0 out of range (0 edgeTypes)"},
	} {
		_, err := ReadGraph(strings.NewReader(c.in))
		assert.ErrorContains(t, err, c.err, c.in)
	}
	// Edges may come before the nodes; an Index edge's data is its index.
	s, err := ReadGraph(strings.NewReader(`{"edges":[0,7,2,5,0,7,3,0],"edgeNames":["v"],"version":3,"nodes":[0,0,0,0,7,16,1,0],"nodeClassNames":["<root>","Foo"],"edgeTypes":["Internal","Property","Index","Variable"]}`))
	assert.NilError(t, err)
	var got []Edge
	for e := range s.Edges(0) {
		got = append(got, e)
	}
	assert.DeepEqual(t, got, []Edge{{Type: "Index", Index: 5, To: 1}, {Type: "Variable", Name: "v", Index: -1, To: 1}})
}
