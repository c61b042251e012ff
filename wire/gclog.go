package wire

// GCSlice is one pause of a collection, in milliseconds on the browser's
// trace clock (a monotonic clock; CDP trace event ts / 1000).
type GCSlice struct {
	StartTimestamp float64 `json:"startTimestamp"`
	EndTimestamp   float64 `json:"endTimestamp"`
}

// GCEntry is one garbage collection cycle of one V8 isolate, shaped like
// onGarbageCollection's statistics, with what tells V8's isolates and
// collectors apart.
type GCEntry struct {
	// Collections are the cycle's pauses on the isolate's thread: the
	// incremental marking steps, then the final atomic pause.
	Collections []GCSlice `json:"collections"`
	// Reason is V8's GarbageCollectionReason ("allocation failure",
	// "low memory notification", "idle task", ...); null if V8's summary
	// of the cycle was not recorded.
	Reason *string `json:"reason"`
	// NonincrementalReason is, for a full collection V8 did all at once
	// (no incremental marking), why it collected the whole heap (V8's
	// collector reason, or Reason if it gives none); null otherwise.
	NonincrementalReason *string `json:"nonincrementalReason"`
	// GCCycleNumber is V8's GC epoch: increasing per isolate, shared by
	// minor and major collections.
	GCCycleNumber int64 `json:"gcCycleNumber"`
	// Collector is "scavenger" or "minor-mark-sweeper" (minor GCs, which
	// SpiderMonkey's onGarbageCollection doesn't report) or
	// "mark-compactor" (major GCs).
	Collector string `json:"collector"`
	// Pid and Tid are the isolate's process and thread, Process and
	// Thread their names in the trace ("Renderer", "CrRendererMain",
	// "DedicatedWorker thread", ...).
	Pid     int64  `json:"pid"`
	Tid     int64  `json:"tid"`
	Process string `json:"process,omitempty"`
	Thread  string `json:"thread,omitempty"`
	// HeapBytesBefore and HeapBytesAfter are the live object bytes before
	// and after the cycle (V8's start_object_size and end_object_size).
	HeapBytesBefore *int64 `json:"heapBytesBefore,omitempty"`
	HeapBytesAfter  *int64 `json:"heapBytesAfter,omitempty"`
}

// GCLog is the reply of the gc-log commands.
type GCLog struct {
	Collecting bool      `json:"collecting"`
	Entries    []GCEntry `json:"entries"`
	// DataLossOccurred is set when the browser's trace buffer wrapped (or
	// tracing ended unexpectedly) since the last read: entries are missing.
	DataLossOccurred bool `json:"dataLossOccurred"`
	// Stopped says why collecting stopped on its own, if it did.
	Stopped string `json:"stopped,omitempty"`
}

// GCLogState is the reply of POST gc-log.
type GCLogState struct {
	Collecting bool `json:"collecting"`
}

// GCLogArgs are the parameters of POST gc-log.
type GCLogArgs struct {
	Collect *bool `json:"collect"`
}
