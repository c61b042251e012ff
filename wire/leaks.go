package wire

// The leak check's URI templates.
const (
	LeaksStartPath = "/session/{id}/wdext/memory/leaks/start"
	LeaksStopPath  = "/session/{id}/wdext/memory/leaks/stop"
	// LeaksIterationPath marks the end of an iteration of a check under
	// way (each but the last, or each).
	LeaksIterationPath = "/session/{id}/wdext/memory/leaks/iteration"
)

// The kinds of leak a LeakReport lists.
const (
	LeakObjects        = "objects"
	LeakDetachedDOM    = "detached-dom"
	LeakCollection     = "collection"
	LeakEventListeners = "event-listeners"
	LeakTimers         = "timers"
)

// LeakStartArgs are the parameters of leaks/start.
type LeakStartArgs struct {
	// Targets is "page" (the default): the page's isolate; or "all": the
	// page's and those of its out-of-process frames and workers, each
	// checked on its own (leaks/stop then answers AllLeaks).
	Targets string `json:"targets,omitempty"`
}

// LeakStopArgs are the parameters of leaks/stop.
type LeakStopArgs struct {
	// Iterations is the number of times the client ran its scenario
	// between start and stop (≥ 1).
	Iterations int `json:"iterations"`
}

// LeakReport is the verdict of leaks/stop (and of `wdext leaks`).
type LeakReport struct {
	Iterations int `json:"iterations"`
	// BytesBefore and BytesAfter are the self sizes of all nodes of the
	// baseline and final heap snapshots.
	BytesBefore int64 `json:"bytesBefore"`
	BytesAfter  int64 `json:"bytesAfter"`
	// Leaks are the groups that grew by a multiple of Iterations (at least
	// once per iteration); empty, never null, when nothing leaks.
	Leaks []Leak `json:"leaks"`
}

// TargetLeaks is one isolate's verdict in AllLeaks.
type TargetLeaks struct {
	Type     string      `json:"type"` // "page", "iframe" or "worker"
	URL      string      `json:"url"`
	TargetID string      `json:"targetId"`
	Report   *LeakReport `json:"report"` // null if Error is set
	// Error says why a frame or worker has no verdict (it went away, or
	// its snapshot failed).
	Error string `json:"error,omitempty"`
}

// AllLeaks is leaks/stop's reply to a check started with "targets": "all".
type AllLeaks struct {
	Iterations int           `json:"iterations"`
	Targets    []TargetLeaks `json:"targets"`
}

// Leak is one group of things that grew at every iteration.
type Leak struct {
	Kind string `json:"kind"` // LeakObjects, LeakDetachedDOM, LeakCollection, LeakEventListeners or LeakTimers
	// Name names the group: a class ("Foo"), a detached node
	// ("HTMLDivElement div.dialog"), a collection ("Window.cache (Map)"),
	// an event target and type ("Window resize"), a timer's callback
	// ("poll()").
	Name         string `json:"name"`
	CountDelta   int64  `json:"countDelta"`
	PerIteration int64  `json:"perIteration"`
	// BytesDelta is the self size of the group's new members (for a
	// collection, the growth of its backing store; 0 for listeners).
	BytesDelta int64 `json:"bytesDelta"`
	// RetainedBytes is what the group's new members retain in the final
	// heap: their retained sizes in its dominator tree (the memory that
	// would go with them), counting a member another member dominates
	// once; for listeners, their new handlers' (a closure and what only
	// it holds); for a collection, its new entries'. RetainedPerIteration
	// is RetainedBytes / N.
	RetainedBytes        int64 `json:"retainedBytes"`
	RetainedPerIteration int64 `json:"retainedPerIteration"`
	// RetainerPath is the shortest path of strong edges from the global
	// object (or a GC root) to one representative, alternating nodes and
	// edges: ["Window", "store (property)", "Array", "[20] (element)",
	// "Foo"]; for listeners, to a new handler. Empty when none was found.
	RetainerPath []string `json:"retainerPath"`
	// CreatedFrom is the youngest JavaScript frame of the
	// representative's allocation stack; null when the engine does not
	// know it.
	CreatedFrom *LeakFrame `json:"createdFrom"`
}

// LeakFrame is a source location in a LeakReport.
type LeakFrame struct {
	FunctionName string `json:"functionName"`
	URL          string `json:"url"`
	Line         int    `json:"line"`   // 1-based; 0 if unknown
	Column       int    `json:"column"` // 1-based; 0 if unknown
}
