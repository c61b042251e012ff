package wire

// AllocationSettings are Debugger.Memory's allocation accessors, plus the
// V8 sampling interval they map to. They are the reply of the allocations
// command.
type AllocationSettings struct {
	TrackingAllocationSites       bool    `json:"trackingAllocationSites"`
	AllocationSamplingProbability float64 `json:"allocationSamplingProbability"`
	MaxAllocationsLogLength       int     `json:"maxAllocationsLogLength"`
	AllocationsLogOverflowed      bool    `json:"allocationsLogOverflowed"`
	// SamplingInterval is V8's mean number of bytes between samples
	// (HeapProfiler.startSampling); 0 when nothing is sampled.
	SamplingInterval float64 `json:"samplingInterval"`
}

// AllocationArgs are the parameters of the allocations command; an omitted
// one keeps its current value.
type AllocationArgs struct {
	TrackingAllocationSites       *bool    `json:"trackingAllocationSites,omitempty"`
	AllocationSamplingProbability *float64 `json:"allocationSamplingProbability,omitempty"`
	MaxAllocationsLogLength       *float64 `json:"maxAllocationsLogLength,omitempty"`
}

// AllocationEntry is one entry of the allocations log, in
// drainAllocationsLog's shape. V8's sampling heap profiler gives the stack
// and the size; the fields it cannot give are null (see the package doc).
type AllocationEntry struct {
	Timestamp *float64 `json:"timestamp"`
	Frame     *Frame   `json:"frame"`
	// Stack is the whole allocation stack, youngest frame first (Frame
	// is its first element); SavedFrame would chain them by "parent".
	Stack       []Frame `json:"stack"`
	Class       *string `json:"class"`
	Constructor *string `json:"constructor"`
	Size        *int64  `json:"size"`
	// SampledBytes is V8's estimate of the bytes this sample stands for:
	// the object's size times the number of allocations of that size one
	// sample represents at the sampling interval.
	SampledBytes int64 `json:"sampledBytes"`
	InNursery    *bool `json:"inNursery"`
}

// AllocationsLog is the reply of the drain command.
type AllocationsLog struct {
	Log        []AllocationEntry `json:"log"`
	Overflowed bool              `json:"overflowed"`
}
