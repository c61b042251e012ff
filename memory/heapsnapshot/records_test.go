package heapsnapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/memory/heapsnapshot/heapsnapshottest"
)

// records' fast path and careful path agree, whatever the integers'
// lengths and wherever the buffer ends.
func TestRecordsIntegers(t *testing.T) {
	var want []int64
	var b strings.Builder
	b.WriteString("[")
	for v := int64(0); v < 1e18; v = v*3 + v%7 + 1 {
		for _, x := range []int64{v, v + 1, v * 10} {
			if x >= 1e18 {
				continue
			}
			if len(want) > 0 {
				b.WriteString([]string{",", "\n,", ", ", ",\n"}[len(want)%4])
			}
			b.WriteString(strconv.FormatInt(x, 10))
			want = append(want, x)
		}
	}
	b.WriteString("]")
	for _, size := range []int{1, 7, 64, 4096} {
		var got []int64
		sc := newScanner(strings.NewReader(b.String()))
		sc.buf = make([]byte, max(size, 2))
		n, err := sc.records(1, collect(&got))
		assert.NilError(t, err)
		assert.DeepEqual(t, got, want)
		assert.Equal(t, n, len(want))
	}
	for _, bad := range []string{"[1234567890123456789]", "[01]", "[1.5]", "[1e3]", "[-0]", "[1,,2]", "[1 2]"} {
		sc := newScanner(strings.NewReader(bad + strings.Repeat(" ", 64)))
		var got []int64
		_, err := sc.records(1, collect(&got))
		if bad == "[-0]" {
			assert.NilError(t, err)
			continue
		}
		assert.Assert(t, err != nil, fmt.Sprint(bad))
	}
}

// collect is a sink that keeps the integers in *got.
func collect(got *[]int64) sink {
	return sink{
		reserve: func(have, need int) { *got = append((*got)[:have], make([]int64, need-have)...) },
		put: func(batch []int64, first int) error {
			copy((*got)[first:], batch)
			return nil
		},
	}
}

// Reading on two cores (scanner.parallel) gives what reading on one does,
// whatever the input's spacing, and the same errors.
func TestReadParallel(t *testing.T) {
	var buf bytes.Buffer
	assert.NilError(t, heapsnapshottest.Write(&buf, heapsnapshottest.Options{Objects: 20_000, Traces: true}))
	gen := buf.String()
	nodes, edges := strings.Index(gen, `"nodes":[`), strings.Index(gen, `"edges":[`)
	strs := strings.Index(gen, `"strings":[`)
	rng := rand.New(rand.NewPCG(1, 2))
	// spaced puts a space after n of the commas in gen[from:to].
	spaced := func(from, to, n int) string {
		b := []byte(gen)
		for range n {
			i := from + rng.IntN(to-from)
			if j := bytes.IndexByte(b[i:to], ','); j >= 0 {
				b = slices.Insert(b, i+j+1, ' ')
				to++
			}
		}
		return string(b)
	}
	cases := map[string]string{
		"generated":    gen,
		"spaced nodes": spaced(nodes, edges, 5),
		"spaced edges": spaced(edges, strs, 5),
		"no newlines":  strings.ReplaceAll(gen[:strs], "\n,", ",") + gen[strs:],
		"long integer": gen[:edges+20] + strings.Replace(gen[edges+20:], ",", ",0000000000000000000000,", 1),
		"bad to_node":  gen[:edges+len(gen[edges:strs])/2] + strings.Replace(gen[edges+len(gen[edges:strs])/2:], ",", ",7,", 1),
		"huge name":    gen[:edges+len(gen[edges:strs])/2] + strings.Replace(gen[edges+len(gen[edges:strs])/2:], ",", ",4294967296,", 1),
	}
	// Strings with escapes, and without newlines.
	escaped := gen[:strs] + strings.NewReplacer(`"item-1`, `"\ud83d\ude00 \"\\\n\u00e9-1`, `"item-2`, `"\ud83d-2`, `"item-3`, `"a\",\"`).Replace(gen[strs:])
	cases["escaped strings"] = escaped
	cases["strings without newlines"] = gen[:strs] + strings.ReplaceAll(gen[strs:], ",\n", ",")
	mid := strs + len(gen[strs:])/2
	cases["bad escape"] = gen[:mid] + strings.Replace(gen[mid:], `"item-`, `"\x`, 1)
	// A self_size past 32 bits, in a node record of the middle.
	i := nodes + len(gen[nodes:edges])/2
	i += strings.Index(gen[i:], "\n,") + 2
	fields := strings.SplitN(gen[i:], ",", 5)
	fields[3] = "5000000000"
	cases["big self_size"] = gen[:i] + strings.Join(fields, ",")
	defer func(p bool) { parallel = p }(parallel)
	for name, in := range cases {
		parallel = false
		want, wantErr := Read(strings.NewReader(in))
		parallel = true
		got, err := Read(strings.NewReader(in))
		if wantErr != nil {
			// The same error, found at the same record; where the reader
			// stood when it checked the record ("at byte N") may differ.
			at := regexp.MustCompile(`at byte \d+: `)
			assert.Check(t, err != nil && at.ReplaceAllString(err.Error(), "") == at.ReplaceAllString(wantErr.Error(), ""),
				"%s: %v, want %v", name, err, wantErr)
			continue
		}
		assert.NilError(t, err, name)
		assert.Assert(t, reflect.DeepEqual(dump(got), dump(want)), name)
		assert.Assert(t, slices.Equal(got.strings, want.strings), name)
		if name == "big self_size" {
			assert.Check(t, slices.ContainsFunc(dump(got), func(n node) bool { return n.Size == 5000000000 }))
		}
		if name == "generated" || name == "escaped strings" {
			var ref struct {
				Nodes, Edges []int64
				Strings      []string
			}
			assert.NilError(t, json.Unmarshal([]byte(in), &ref))
			assert.Equal(t, got.NodeCount()*7, len(ref.Nodes))
			assert.Equal(t, got.TotalEdges()*3, len(ref.Edges))
			assert.Assert(t, slices.Equal(got.strings, ref.Strings))
		}
	}
}
