package firefox

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/wire"
)

// The content processes' logs, each oldest first, merge into one oldest
// first; a process's entries keep their order at equal times.
func TestOldestFirst(t *testing.T) {
	log := func(class string, times ...float64) []wire.AllocationEntry {
		out := make([]wire.AllocationEntry, len(times))
		for i := range times {
			out[i] = wire.AllocationEntry{Timestamp: &times[i], Class: &class}
		}
		return out
	}
	got := oldestFirst([][]wire.AllocationEntry{log("a", 1, 4, 4, 9), log("b", 2, 4), log("c", 0)})
	var order []string
	for _, e := range got {
		order = append(order, *e.Class)
	}
	assert.DeepEqual(t, order, []string{"c", "a", "b", "a", "a", "b", "a"})
	assert.Equal(t, len(oldestFirst(nil)), 0)
	one := log("a", 3, 1)
	assert.Equal(t, &oldestFirst([][]wire.AllocationEntry{one})[0], &one[0])
}
