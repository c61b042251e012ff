package e2e

import (
	"slices"
	"time"
)

// Median is the middle of ds (the upper one of an even count), which it
// leaves as it is: what the benchmarks print of their timings.
func Median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
