package census

import (
	"bytes"
	"sync"
	"testing"

	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/memory/heapsnapshot/heapsnapshottest"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// generated is a synthetic snapshot of 100,000 objects with allocation
// traces, and its size in bytes.
var generated = sync.OnceValues(func() (*heapsnapshot.Snapshot, int) {
	var buf bytes.Buffer
	if err := heapsnapshottest.Write(&buf, heapsnapshottest.Options{Objects: 100_000, Traces: true}); err != nil {
		panic(err)
	}
	n := buf.Len()
	s, err := heapsnapshot.Read(&buf)
	if err != nil {
		panic(err)
	}
	return s, n
})

// BenchmarkCensus reports MB/s of the snapshot's JSON, for comparison with
// BenchmarkRead, and ns per node.
func BenchmarkCensus(b *testing.B) {
	s, size := generated()
	for _, bc := range []struct{ name, breakdown string }{
		{"default", ""},
		{"count", `{"by":"count"}`},
		{"allocationStack", `{"by":"allocationStack","then":{"by":"objectClass"}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bd, err := Parse([]byte(bc.breakdown))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Take(V8(s), bd); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(s.NodeCount()), "ns/node")
		})
	}
}

func TestTakeGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 22 MB snapshot")
	}
	s, _ := generated()
	r, err := Take(V8(s), ObjectClass{Then: Count{Count: true}, Other: InternalType{Then: Count{Count: true}}})
	assert.NilError(t, err)
	count := func(v any) int64 { return *v.(Counts).Count }
	classes := r.(map[string]any)
	for _, c := range []string{"Object", "Foo", "Bar", "Array"} {
		assert.Check(t, is.Equal(count(classes[c]), int64(25_000)), c)
	}
	other := classes["other"].(map[string]any)
	for typ, want := range map[string]int64{"array": 100_000, "string": 100_000, "number": 100_000, "object shape": 4, "code": 4} {
		assert.Check(t, is.Equal(count(other[typ]), want), typ)
	}
}
