package leaks

import (
	"bytes"
	"testing"

	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/memory/heapsnapshot/heapsnapshottest"
)

// BenchmarkFind is the verdict on a heap whose 200,000 objects (800,000
// nodes) are all new: the paths, the groups and their clusters, the
// retained sizes.
func BenchmarkFind(b *testing.B) {
	read := func(o heapsnapshottest.Options) *heapsnapshot.Snapshot {
		var buf bytes.Buffer
		if err := heapsnapshottest.Write(&buf, o); err != nil {
			b.Fatal(err)
		}
		s, err := heapsnapshot.Read(&buf)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	base := Summarize(read(heapsnapshottest.Options{Objects: 0}))
	final := read(heapsnapshottest.Options{Objects: 200_000, Traces: true})
	b.ReportAllocs()
	for b.Loop() {
		r, err := Find(Input{Baseline: base, Final: final, Iterations: 10})
		if err != nil || len(r.Leaks) == 0 {
			b.Fatal(err, r.Leaks)
		}
	}
}
