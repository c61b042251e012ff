package census

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/wdext/wdext/memory/heap"
	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/memory/jscsnapshot"
)

// RunFile is `wdext census FILE [--breakdown JSON]`: it takes a census of
// the heap snapshot in the file at path, V8's or JavaScriptCore's, grouped by
// breakdownJSON ("" for the default), and writes the result to w as
// indented JSON. The breakdown is checked before the file is read.
func RunFile(path, breakdownJSON string, w io.Writer) error {
	b, err := Parse([]byte(breakdownJSON))
	if err != nil {
		return fmt.Errorf("census: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("census: %w", err)
	}
	defer f.Close()
	heap, err := ReadHeap(f)
	if err != nil {
		return fmt.Errorf("census: %s: %w", path, err)
	}
	result, err := Take(heap, b)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // class names like "<anonymous>" stay readable
	return enc.Encode(result)
}

// ReadHeap reads a V8 or a JavaScriptCore heap snapshot from r, telling them
// apart by the first member of the JSON object: V8 writes "snapshot" first,
// JSC "version". Anything else is left to the V8 reader, which skips
// unknown members, to accept or reject. Either way the input streams
// through as the reader parses it.
func ReadHeap(r io.Reader) (heap.Heap, error) {
	br := bufio.NewReaderSize(r, 4096)
	if firstKey(br) == "version" {
		s, err := jscsnapshot.Read(br)
		if err != nil {
			return nil, err
		}
		return JSC(s), nil
	}
	var in io.Reader = br
	if f, ok := r.(stater); ok {
		in = statReader{br, f} // heapsnapshot.Read sizes its columns with it
	}
	s, err := heapsnapshot.ReadNodes(in) // a census counts nodes only
	if err != nil {
		return nil, err
	}
	return V8(s), nil
}

type stater interface{ Stat() (fs.FileInfo, error) }

// statReader reads from a bufio.Reader, and tells the size of the file
// under it.
type statReader struct {
	*bufio.Reader
	stater
}

// firstKey returns the first member name of the JSON object at the start of
// br, or "" if br doesn't start with one that fits in its buffer.
func firstKey(br *bufio.Reader) string {
	head, _ := br.Peek(br.Size()) // a short head is fine: it may hold the key
	dec := json.NewDecoder(bytes.NewReader(head))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return ""
	}
	key, _ := dec.Token()
	s, _ := key.(string)
	return s
}
