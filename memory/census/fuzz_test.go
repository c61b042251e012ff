package census

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/wdext/wdext/memory/heap"
)

// FuzzParse checks that any input either parses into a breakdown a census
// can be taken with, or fails with an *Error.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{"", `{"by":"count","bytes":false}`, `[{"by":"coarseType","other":{"by":"internalType"}}]`,
		`{"by":"allocationStack","then":{"by":"objectClass"},"noStack":[]}`, `{"by":"objectClass","then":null}`} {
		f.Add([]byte(seed))
	}
	s := read(f, "traced.heapsnapshot")
	jsc := readMiniBrowser(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Parse(data)
		if err != nil {
			if e := (*Error)(nil); !errors.As(err, &e) {
				t.Fatalf("not an *Error: %v", err)
			}
			return
		}
		for _, h := range []heap.Heap{V8(s), JSC(jsc)} {
			r, err := Take(h, b)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := json.Marshal(r); err != nil {
				t.Fatal(err)
			}
		}
	})
}
