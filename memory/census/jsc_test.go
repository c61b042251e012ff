package census

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wdext/wdext/memory/heap"
	"github.com/wdext/wdext/memory/jscsnapshot"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// The JSC test snapshot lives with its reader; see its read_test.go.
const minibrowser = "../jscsnapshot/testdata/minibrowser-2.50.6.json"

func readJSC(t testing.TB, data string) *jscsnapshot.Snapshot {
	t.Helper()
	s, err := jscsnapshot.Read(strings.NewReader(data))
	assert.NilError(t, err)
	return s
}

func readMiniBrowser(t testing.TB) *jscsnapshot.Snapshot {
	t.Helper()
	data, err := os.ReadFile(minibrowser)
	assert.NilError(t, err)
	return readJSC(t, string(data))
}

// count is the count of a Counts result.
func count(v any) int64 { return *v.(Counts).Count }

func TestTakeJSC(t *testing.T) {
	s := readMiniBrowser(t)
	r, err := Take(JSC(s), nil)
	assert.NilError(t, err)
	c := r.(Coarse)
	objects, other := c.Objects.(map[string]any), c.Other.(map[string]any)
	jsonEqual(t, objects["Foo"], `{"count":1000,"bytes":64000}`)
	jsonEqual(t, objects["ArrayBuffer"], `{"count":3,"bytes":10485940}`) // window.big and 2 prototypes
	for _, class := range []string{"Function", "Array", "Window", "HTMLDocument", "Object"} {
		assert.Check(t, objects[class] != nil, class)
	}
	jsonEqual(t, c.Scripts, `{"count":1100,"bytes":134581}`)
	jsonEqual(t, c.Strings, `{"count":969,"bytes":19659}`)
	for _, typ := range []string{"Structure", "PropertyTable", "symbol", "BigInt", "GetterSetter", "SymbolTable"} {
		assert.Check(t, other[typ] != nil, typ)
	}
	// Objects, scripts and strings are nowhere else.
	for _, typ := range []string{"Function", "Foo", "string", "FunctionExecutable"} {
		assert.Check(t, other[typ] == nil, typ)
	}

	// Everything but the root, once.
	r, err = Take(JSC(s), CoarseType{})
	assert.NilError(t, err)
	c = r.(Coarse)
	assert.Equal(t, count(c.Objects)+count(c.Scripts)+count(c.Strings)+count(c.Other), int64(s.NodeCount()-1))
	jsonEqual(t, r, `{"objects":{"count":2082,"bytes":10594075},"scripts":{"count":1100,"bytes":134581},
		"strings":{"count":969,"bytes":19659},"other":{"count":1355,"bytes":81564}}`)

	// internalType: class names, with the ObjectSubtype nodes under "Object".
	r, err = Take(JSC(s), InternalType{Then: Count{Count: true}})
	assert.NilError(t, err)
	types := r.(map[string]any)
	assert.Check(t, is.Equal(count(types["Object"]), int64(1009)))
	assert.Check(t, is.Equal(count(types["Structure"]), int64(358)))
	assert.Check(t, is.Equal(count(types["Function"]), int64(978)))
	assert.Check(t, types["Foo"] == nil)
	assert.Check(t, types["<root>"] == nil)

	// No allocation stacks: everything is noStack.
	r, err = Take(JSC(s), AllocationStack{Then: Count{Count: true}, NoStack: countAll})
	assert.NilError(t, err)
	jsonEqual(t, r, `[{"stack":null,"noStack":true,"census":{"count":5506,"bytes":10829879}}]`)
}

// TestTakeJSCKinds checks the kinds JSC makes: a class name JSC gives both
// to objects and to other cells is counted apart, in objects and in other.
func TestTakeJSCKinds(t *testing.T) {
	s := readJSC(t, `{"version":3,"type":"Inspector","nodeClassNames":["<root>","Structure","string","BigInt","Function","FunctionExecutable"],
		"nodes":[0,0,0,0, 1,40,1,1, 2,32,1,2, 3,16,2,0, 4,16,3,0, 5,32,4,0, 6,64,5,1, 7,8,0,2]}`)
	// Node 2 is an instance of a user class Structure; node 7 one of a
	// class named "<root>", which only the root's kind skips.
	for _, tc := range []struct{ breakdown, want string }{
		{"", `{"objects":{"Structure":{"count":1,"bytes":32},"Function":{"count":1,"bytes":32},"<root>":{"count":1,"bytes":8},"other":{"count":0,"bytes":0}},
			"scripts":{"count":1,"bytes":64},"strings":{"count":1,"bytes":16},
			"other":{"Structure":{"count":1,"bytes":40},"BigInt":{"count":1,"bytes":16}}}`},
		{`{"by":"internalType","then":{"by":"count","bytes":false}}`,
			`{"Object":{"count":2},"Structure":{"count":1},"string":{"count":1},"BigInt":{"count":1},"Function":{"count":1},"FunctionExecutable":{"count":1}}`},
		{`{"by":"objectClass","then":{"by":"count","bytes":false},"other":{"by":"count","bytes":false}}`,
			`{"Structure":{"count":1},"Function":{"count":1},"<root>":{"count":1},"other":{"count":4}}`},
	} {
		b, err := Parse([]byte(tc.breakdown))
		assert.NilError(t, err)
		r, err := Take(JSC(s), b)
		assert.NilError(t, err)
		jsonEqual(t, r, tc.want)
	}

	// An empty snapshot counts nothing.
	r, err := Take(JSC(readJSC(t, `{"version":3,"nodes":[],"nodeClassNames":[]}`)), nil)
	assert.NilError(t, err)
	jsonEqual(t, r, `{"objects":{"other":{"count":0,"bytes":0}},"scripts":{"count":0,"bytes":0},"strings":{"count":0,"bytes":0},"other":{}}`)
	_, err = Take(JSC(nil), nil)
	assert.ErrorContains(t, err, "no snapshot")
}

func TestJSCCoarse(t *testing.T) {
	for want, classes := range map[heap.CoarseKind][]string{
		heap.CoarseStrings: {"string"},
		heap.CoarseScripts: {"FunctionExecutable", "UnlinkedFunctionExecutable", "NativeExecutable", "ProgramExecutable",
			"ModuleProgramExecutable", "EvalExecutable", "ProgramCodeBlock", "FunctionCodeBlock",
			"UnlinkedFunctionCodeBlock", "UnlinkedProgramCodeBlock"},
		heap.CoarseOther: {"String", "symbol", "Structure", "SymbolTable", "FunctionRareData", "BigInt", "PropertyTable"},
	} {
		for _, class := range classes {
			assert.Check(t, is.Equal(jscCoarse(class), want), class)
		}
	}
}

// badHeap has a kind with no coarse type.
type badHeap struct{ heap.Heap }

func (badHeap) Kinds() []heap.Kind { return []heap.Kind{{Name: "x", Coarse: heap.CoarseStrings + 1}} }

func TestTakeBadKind(t *testing.T) {
	_, err := Take(badHeap{}, nil)
	assert.ErrorContains(t, err, `census: kind "x" has no coarse type 4`)
}

func TestReadHeap(t *testing.T) {
	jsc, err := os.ReadFile(minibrowser)
	assert.NilError(t, err)
	v8, err := os.ReadFile(testdata + "small.heapsnapshot")
	assert.NilError(t, err)
	for _, tc := range []struct {
		name string
		data []byte
		jsc  bool
	}{
		{"jsc", jsc, true},
		{"jsc with space", append([]byte(" \n\t{ \r\n "), jsc[1:]...), true},
		{"v8", v8, false},
		{"v8 with space", append([]byte("\n  "), v8...), false},
	} {
		h, err := ReadHeap(bytes.NewReader(tc.data))
		assert.NilError(t, err, tc.name)
		_, isJSC := h.(*jscHeap)
		assert.Check(t, is.Equal(isJSC, tc.jsc), tc.name)
	}

	// Errors come from the reader the first member picks.
	for _, tc := range []struct{ in, err string }{
		{`{"version":3,"type":"GCDebugging"}`, `jscsnapshot: type "GCDebugging" is not supported`},
		{`{"version":3,"nodes":[0,0,0],"nodeClassNames":[]}`, "jscsnapshot: nodes has 3 numbers"},
		{`{"snapshot":{}}`, "heapsnapshot:"},
		{`{"nodes":[]}`, "heapsnapshot:"},
		{`[]`, "heapsnapshot:"},
		{``, "heapsnapshot:"},
	} {
		_, err := ReadHeap(strings.NewReader(tc.in))
		assert.ErrorContains(t, err, tc.err, tc.in)
	}
}

func TestRunFileJSC(t *testing.T) {
	var out bytes.Buffer
	assert.NilError(t, RunFile(minibrowser, `{"by":"coarseType","objects":{"by":"objectClass","then":{"by":"count","bytes":false}}}`, &out))
	var r struct {
		Objects map[string]struct{ Count int }
		Strings struct{ Count, Bytes int }
	}
	assert.NilError(t, json.Unmarshal(out.Bytes(), &r))
	assert.Equal(t, r.Objects["Foo"].Count, 1000)
	assert.Equal(t, r.Strings.Count, 969)
	assert.Check(t, strings.HasSuffix(out.String(), "}\n") && strings.Contains(out.String(), "\n  \"objects\": {"))

	bad := filepath.Join(t.TempDir(), "bad.json")
	data, err := os.ReadFile(minibrowser)
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(bad, data[:len(data)/2], 0o644))
	err = RunFile(bad, "", &out)
	assert.Assert(t, err != nil && strings.Contains(err.Error(), "bad.json: jscsnapshot: unexpected EOF"), "%v", err)
}
