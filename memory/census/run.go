package census

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/wdext/wdext/memory/heapsnapshot"
)

// RunFile is `wdext census FILE [--breakdown JSON]`: it takes a census of
// the heap snapshot in the file at path, grouped by breakdownJSON ("" for
// the default), and writes the result to w as indented JSON. The breakdown
// is checked before the file is read.
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
	snap, err := heapsnapshot.Read(f)
	if err != nil {
		return fmt.Errorf("census: %s: %w", path, err)
	}
	result, err := Take(snap, b)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // class names like "<anonymous>" stay readable
	return enc.Encode(result)
}
