package heapsnapshot_test

import (
	"bytes"
	"runtime"
	"sync"
	"testing"

	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/memory/heapsnapshot/heapsnapshottest"
	"gotest.tools/v3/assert"
)

// generated is a synthetic snapshot of 100,000 objects (~22 MB), made once.
var generated = sync.OnceValues(func() ([]byte, error) {
	var buf bytes.Buffer
	err := heapsnapshottest.Write(&buf, heapsnapshottest.Options{Objects: 100_000, Traces: true})
	return buf.Bytes(), err
})

func TestGenerated(t *testing.T) {
	for _, traces := range []bool{false, true} {
		var buf bytes.Buffer
		assert.NilError(t, heapsnapshottest.Write(&buf, heapsnapshottest.Options{Objects: 20, Traces: traces}))
		s, err := heapsnapshot.Read(&buf)
		assert.NilError(t, err)
		assert.Equal(t, s.NodeCount(), 3+3*4+4*20)
		classes := map[string]int{}
		for i := range s.NodeCount() {
			if c, ok := s.ClassName(i); ok {
				classes[c]++
			}
		}
		// 5 of each class, the Window, and a constructor per class.
		assert.DeepEqual(t, classes, map[string]int{"Object": 5, "Foo": 5, "Bar": 5, "Array": 5, "Window": 1, "Function": 4})
		frames, ok := s.Stack(s.TraceNodeID(3 + 3*4 + 4*1)) // object 1 is a Foo
		assert.Equal(t, ok, traces)
		if traces {
			assert.Equal(t, len(frames), 2)
			assert.Equal(t, frames[0].FunctionDisplayName, "makeFoo")
			assert.Equal(t, frames[1].FunctionDisplayName, "main")
		}
	}
}

// Reading keeps well under the file's size: the columns are ~18 bytes a
// node and ~9 an edge, against ~60 and ~15 bytes of JSON. TotalAlloc bounds
// the peak heap Read adds.
func TestReadMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 22 MB snapshot")
	}
	data, err := generated()
	assert.NilError(t, err)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := heapsnapshot.Read(bytes.NewReader(data))
	runtime.ReadMemStats(&after)
	assert.NilError(t, err)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d bytes of JSON, %d nodes, %d edges: read allocated %d bytes (%.2f× the input)",
		len(data), s.NodeCount(), s.TotalEdges(), allocated, float64(allocated)/float64(len(data)))
	assert.Assert(t, allocated < uint64(len(data))*3/2, "allocated %d for %d bytes of input", allocated, len(data))
}

func BenchmarkRead(b *testing.B) {
	data, err := generated()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := heapsnapshot.Read(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
