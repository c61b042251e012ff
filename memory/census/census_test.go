package census

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wdext/wdext/memory/heapsnapshot"
	"gotest.tools/v3/assert"
	"gotest.tools/v3/golden"
)

// The test snapshots live with the reader.
const testdata = "../heapsnapshot/testdata/"

func read(t testing.TB, name string) *heapsnapshot.Snapshot {
	t.Helper()
	f, err := os.Open(testdata + name)
	assert.NilError(t, err)
	defer f.Close()
	s, err := heapsnapshot.Read(f)
	assert.NilError(t, err)
	return s
}

// jsonEqual compares got, marshalled, with the JSON want.
func jsonEqual(t *testing.T, got any, want string) {
	t.Helper()
	b, err := json.Marshal(got)
	assert.NilError(t, err)
	var g, w any
	assert.NilError(t, json.Unmarshal(b, &g))
	assert.NilError(t, json.Unmarshal([]byte(want), &w), want)
	assert.DeepEqual(t, g, w)
}

func take(t *testing.T, s *heapsnapshot.Snapshot, breakdown string) any {
	t.Helper()
	b, err := Parse([]byte(breakdown))
	assert.NilError(t, err)
	r, err := Take(V8(s), b)
	assert.NilError(t, err)
	return r
}

// small.heapsnapshot holds, besides two synthetic roots: Object ×2 (24+16
// bytes), Foo 32, a closure 64, a regexp 40, an Array object 32, code 100,
// strings 20+32 (concatenated)+40, and one node each of array 80, hidden 12,
// number 16, native 120, object shape 40, symbol 24, bigint 16.
func TestTakeDefault(t *testing.T) {
	s := read(t, "small.heapsnapshot")
	want := `{
		"objects": {
			"Object":   {"count": 2, "bytes": 40},
			"Foo":      {"count": 1, "bytes": 32},
			"Function": {"count": 1, "bytes": 64},
			"RegExp":   {"count": 1, "bytes": 40},
			"Array":    {"count": 1, "bytes": 32},
			"other":    {"count": 0, "bytes": 0}
		},
		"scripts": {"count": 1, "bytes": 100},
		"strings": {"count": 3, "bytes": 92},
		"other": {
			"array":        {"count": 1, "bytes": 80},
			"hidden":       {"count": 1, "bytes": 12},
			"number":       {"count": 1, "bytes": 16},
			"native":       {"count": 1, "bytes": 120},
			"object shape": {"count": 1, "bytes": 40},
			"symbol":       {"count": 1, "bytes": 24},
			"bigint":       {"count": 1, "bytes": 16}
		}
	}`
	r, err := Take(V8(s), nil)
	assert.NilError(t, err)
	jsonEqual(t, r, want)
	jsonEqual(t, take(t, s, ""), want)
	// Field and type order in the file don't matter.
	jsonEqual(t, take(t, read(t, "reordered.heapsnapshot"), ""), want)
}

func TestTakeBreakdowns(t *testing.T) {
	s := read(t, "small.heapsnapshot")
	for _, tc := range []struct{ breakdown, want string }{
		{`{"by":"count"}`, `{"count":17,"bytes":708}`},
		{`{"by":"count","count":false}`, `{"bytes":708}`},
		{`{"by":"count","bytes":false}`, `{"count":17}`},
		{`{"by":"count","count":false,"bytes":false}`, `{}`},
		{`{"by":"coarseType","other":{"by":"count","bytes":false}}`,
			`{"objects":{"count":6,"bytes":208},"scripts":{"count":1,"bytes":100},"strings":{"count":3,"bytes":92},"other":{"count":7}}`},
		{`{"by":"objectClass","then":{"by":"count","bytes":false},"other":{"by":"internalType","then":{"by":"count","count":false}}}`,
			`{"Object":{"count":2},"Foo":{"count":1},"Function":{"count":1},"RegExp":{"count":1},"Array":{"count":1},
			  "other":{"array":{"bytes":80},"hidden":{"bytes":12},"number":{"bytes":16},"native":{"bytes":120},"object shape":{"bytes":40},
			           "symbol":{"bytes":24},"bigint":{"bytes":16},"string":{"bytes":60},"concatenated string":{"bytes":32},"code":{"bytes":100}}}`},
		{`{"by":"internalType","then":{"by":"count","bytes":false}}`,
			`{"object":{"count":4},"closure":{"count":1},"regexp":{"count":1},"array":{"count":1},"string":{"count":2},
			  "concatenated string":{"count":1},"code":{"count":1},"hidden":{"count":1},"number":{"count":1},"native":{"count":1},
			  "object shape":{"count":1},"symbol":{"count":1},"bigint":{"count":1}}`},
		// Without allocation tracking, everything lands under noStack.
		{`{"by":"allocationStack"}`, `[{"stack":null,"noStack":true,"census":{"count":17,"bytes":708}}]`},
		{`[{"by":"count","bytes":false},[],{"by":"coarseType","objects":{"by":"count","count":false}}]`,
			`[{"count":17},[],{"objects":{"bytes":208},"scripts":{"count":1,"bytes":100},"strings":{"count":3,"bytes":92},"other":{"count":7,"bytes":308}}]`},
	} {
		t.Run(tc.breakdown, func(t *testing.T) {
			jsonEqual(t, take(t, s, tc.breakdown), tc.want)
		})
	}
}

func TestTakeAllocationStack(t *testing.T) {
	s := read(t, "traced.heapsnapshot")
	f := `{"functionDisplayName":"f","source":"http://x/app.js","sourceId":42,"line":10,"column":5}`
	g := `{"functionDisplayName":"g","source":"http://x/app.js","sourceId":42,"line":20,"column":3}`
	h := `{"functionDisplayName":"h","source":"http://x/lib.js","sourceId":43,"line":1,"column":1}`
	jsonEqual(t, take(t, s, `{"by":"allocationStack"}`), `[
		{"stack": [], "census": {"count": 1, "bytes": 30}},
		{"stack": [`+f+`], "census": {"count": 1, "bytes": 50}},
		{"stack": [`+g+`,`+f+`], "census": {"count": 2, "bytes": 20}},
		{"stack": [`+h+`], "census": {"count": 1, "bytes": 20}},
		{"stack": null, "noStack": true, "census": {"count": 1, "bytes": 40}}
	]`)
	jsonEqual(t, take(t, s, `{"by":"objectClass","then":{"by":"allocationStack","then":{"by":"count","bytes":false},"noStack":{"by":"count","count":false}}}`), `{
		"Foo": [{"stack": [`+g+`,`+f+`], "census": {"count": 2}}, {"stack": null, "noStack": true, "census": {"bytes": 40}}],
		"Object": [{"stack": [], "census": {"count": 1}}, {"stack": [`+h+`], "census": {"count": 1}}, {"stack": null, "noStack": true, "census": {"bytes": 0}}],
		"other": {"count": 1, "bytes": 50}
	}`)
}

func TestTakeGoBreakdowns(t *testing.T) {
	s := read(t, "small.heapsnapshot")
	// Omitted parts of a Go literal count everything, as omitted JSON ones do.
	r, err := Take(V8(s), CoarseType{Scripts: Count{Count: true}})
	assert.NilError(t, err)
	jsonEqual(t, r, `{"objects":{"count":6,"bytes":208},"scripts":{"count":1},"strings":{"count":3,"bytes":92},"other":{"count":7,"bytes":308}}`)
	_, err = Take(nil, nil)
	assert.ErrorContains(t, err, "no snapshot")
}

func TestRunFile(t *testing.T) {
	var out bytes.Buffer
	assert.NilError(t, RunFile(testdata+"traced.heapsnapshot", "", &out))
	golden.Assert(t, out.String(), "traced-default.golden")

	out.Reset()
	assert.NilError(t, RunFile(testdata+"traced.heapsnapshot", `{"by":"allocationStack","then":{"by":"count","bytes":false}}`, &out))
	golden.Assert(t, out.String(), "traced-stacks.golden")

	err := RunFile(testdata+"traced.heapsnapshot", `{"by":"coarseType","objects":{"by":"objectclass"}}`, &out)
	assert.ErrorContains(t, err, `census: breakdown.objects.by: unknown breakdown "objectclass"`)

	err = RunFile(filepath.Join(t.TempDir(), "missing.heapsnapshot"), "", &out)
	assert.ErrorContains(t, err, "no such file")

	bad := filepath.Join(t.TempDir(), "bad.heapsnapshot")
	data, err := os.ReadFile(testdata + "small.heapsnapshot")
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(bad, data[:len(data)/2], 0o644))
	err = RunFile(bad, "", &out)
	assert.Assert(t, err != nil && strings.Contains(err.Error(), "bad.heapsnapshot: heapsnapshot:"), "%v", err)
}
