package heapsnapshot

import (
	"fmt"
	"io"
	"io/fs"
	"math"
	"sync"
	"sync/atomic"
)

// Read parses a V8 heap snapshot from r as it arrives. It needs the
// "snapshot" header (meta) before "nodes", "edges" and the trace arrays, as
// V8 writes it; "strings" may come anywhere. Unknown top-level keys are
// skipped. Malformed or truncated input yields an error.
//
// Read stops at the first error without draining r: a caller feeding an
// io.Pipe should CloseWithError the reading end so the writer is released.
//
// Read buffers what it reads itself, in large blocks: a bufio.Reader in
// front only adds a copy. When r has a Stat method, as an *os.File does,
// the file's size lets Read trust the header's node count further, and
// make the columns their full size at once instead of growing them.
func Read(r io.Reader) (*Snapshot, error) { return read(r, false) }

// ReadNodes is Read for a caller that only looks at nodes, a census: it
// checks the edges as Read does but keeps none of them, which is about half
// of what Read keeps (9 bytes an edge, and V8 writes over two edges a
// node). The Snapshot's TotalEdges is 0 and Edges yields nothing;
// EdgeCount still tells how many edges the file gave each node.
func ReadNodes(r io.Reader) (*Snapshot, error) { return read(r, true) }

func read(r io.Reader, nodesOnly bool) (*Snapshot, error) {
	d := &decoder{sc: newScanner(r), s: &Snapshot{}, seen: map[string]bool{}, nodesOnly: nodesOnly}
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			d.size = fi.Size()
		}
	}
	if err := d.sc.object(d.member); err != nil {
		return nil, err
	}
	if err := d.sc.atEOF(); err != nil {
		return nil, err
	}
	if err := d.finish(); err != nil {
		return nil, fmt.Errorf("heapsnapshot: %w", err)
	}
	return d.s, nil
}

// A decoder reads a snapshot's top-level members into a Snapshot: the
// header (header.go), the records of the nodes, the edges and the
// allocation traces (nodes.go, edges.go, traces.go) and the strings; finish
// (finish.go) checks what only the whole can tell.
type decoder struct {
	sc   *scanner
	s    *Snapshot
	seen map[string]bool

	haveHeader            bool
	nodeCount, edgeCount  int64 // declared; -1 if absent
	node, edge, fn, trace layout
	fnErr, traceErr       error // reported only if the array is non-empty
	traceIDs              []uint32
	maxName               atomic.Uint32 // the highest string index nodes and edges use
	// With nodesOnly, edges are checked and counted but not kept;
	// edgeToEnd and nameEnd are one past the highest target and string
	// index they use, for finish to check.
	nodesOnly          bool
	edgesRead          int
	edgeToEnd, nameEnd atomic.Uint64
	size               int64      // the input's size, if known; else 0
	bigMu              sync.Mutex // guards s.bigSizes
}

// Preallocation trusts the header's counts only this far (or as far as the
// input's size allows, if Read knows it), so a lying header cannot make a
// tiny input allocate gigabytes; past it, slices grow. The
// edges' columns are made when "edges" starts, and trust the header's
// count further if "nodes" came first: up to edgesPerNode a node read
// (V8 writes about 2.2), which is still proportional to the input.
const (
	maxPreNodes  = 1 << 21
	maxPreEdges  = 1 << 23
	edgesPerNode = 16
)

func (d *decoder) member(key string) error {
	switch key {
	case "snapshot", "nodes", "edges", "trace_function_infos", "trace_tree", "strings":
		if d.seen[key] {
			return d.sc.errorf("duplicate %q", key)
		}
		d.seen[key] = true
		if key != "snapshot" && key != "strings" && !d.haveHeader {
			return d.sc.errorf("%q before the snapshot header", key)
		}
	}
	switch key {
	case "snapshot":
		return d.header()
	case "nodes":
		return d.nodes()
	case "edges":
		return d.edges()
	case "trace_function_infos":
		return d.funcs()
	case "trace_tree":
		return d.traceNodes(-1, 0)
	case "strings":
		return d.strings()
	}
	return d.sc.skip(0)
}

// u32 reports whether all of vs fit in a uint32.
func u32(vs ...int64) bool {
	for _, v := range vs {
		if uint64(v) > math.MaxUint32 {
			return false
		}
	}
	return true
}

// The columns are filled through sinks: records stores each batch at its
// place, possibly out of order and concurrently (scanner.parallel), in the
// columns' spare capacity, and the lengths are set at the end.

// room is the capacity for at least need entries a column of the given
// capacity grows to. The header's count is trusted once the input has
// shown a quarter of it, so a column of the declared size is copied once,
// not over and over.
func room(capacity, need int, declared int64) int {
	if need <= capacity {
		return capacity
	}
	if declared >= int64(need) && declared <= 4*int64(need) {
		return int(declared)
	}
	return max(need, 2*capacity)
}

// grown returns col with capacity c and its first n entries.
func grown[T uint8 | uint32 | int64](col []T, n, c int) []T {
	return append(column[T](c), col[:n]...)
}

// column makes an empty column of capacity c.
func column[T uint8 | uint32 | int64](c int) []T { return make([]T, 0, c) }

func (d *decoder) strings() error {
	// Appending to one slice would copy it over and over (and allocate ~5×
	// its final size); fixed-size chunks joined at the end allocate 2×.
	// When "nodes" and "edges" came first, as V8 writes them, the highest
	// string index they use is about the table's length: the first chunk
	// is that long, and usually the only one.
	const chunk = 4096
	first := chunk
	if hint := int(d.maxName.Load()) + 1; hint > 1 {
		first = min(hint+hint/64, len(d.s.nodeType)+d.edgesRead) + chunk
	}
	var chunks [][]string
	cur := make([]string, 0, first)
	err := d.sc.strings(func(v string) {
		if len(cur) == cap(cur) {
			chunks = append(chunks, cur)
			cur = make([]string, 0, chunk)
		}
		cur = append(cur, v)
	})
	if len(chunks) == 0 {
		d.s.strings = cur
		return err
	}
	chunks = append(chunks, cur)
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	d.s.strings = make([]string, 0, n)
	for _, c := range chunks {
		d.s.strings = append(d.s.strings, c...)
	}
	return err
}

// raise makes *a at least x.
func raise[T uint32 | uint64, A interface {
	Load() T
	CompareAndSwap(old, new T) bool
}](a A, x T) {
	for {
		m := a.Load()
		if x <= m || a.CompareAndSwap(m, x) {
			return
		}
	}
}
