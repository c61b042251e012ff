package wire

import "encoding/json"

// The extension commands' URI templates ({id} is the session).
const (
	// ForceSamplePath is the JS Self-Profiling spec's Force Sample command.
	ForceSamplePath = "/session/{id}/forcesample"

	MeasurePath          = "/session/{id}/wdext/memory/measure"
	GCPath               = "/session/{id}/wdext/memory/gc"
	CensusPath           = "/session/{id}/wdext/memory/census"
	AllocationsPath      = "/session/{id}/wdext/memory/allocations"
	DrainPath            = "/session/{id}/wdext/memory/allocations/drain"
	GCLogPath            = "/session/{id}/wdext/memory/gc-log"
	LiveObjectsStartPath = "/session/{id}/wdext/memory/live-objects/start"
	LiveObjectsStopPath  = "/session/{id}/wdext/memory/live-objects/stop"
)

// The values of the measure command's "source" parameter.
const (
	// SourceAPI runs the page's own performance.measureUserAgentSpecificMemory()
	// and makes it settle now by forcing the garbage collections it waits
	// for. Needs a cross-origin-isolated page.
	SourceAPI = "api"
	// SourceEngine builds the measurement from the engine's own heap
	// figures and the spec's algorithms. Works on any page, and counts
	// cross-site out-of-process iframes, which the page API leaves out.
	SourceEngine = "engine"
)

// GCResult is the gc command's value.
type GCResult struct {
	Targets []GCTarget `json:"targets"`
}

// GCTarget is one isolate's garbage collection. Targets that share an
// isolate (the page and a same-site frame nested in a cross-site iframe)
// share one heap, collected once and reported once, under the first of
// them: the page, else an iframe.
type GCTarget struct {
	// Type is the CDP target type: "page", "iframe" (out of process) or
	// "worker" (dedicated).
	Type string `json:"type"`
	URL  string `json:"url"`
	// UsedBefore and UsedAfter are the isolate's used JavaScript heap
	// (Runtime.getHeapUsage usedSize) in bytes, before and after. On
	// WebKit, UsedAfter is the VM's live heap (a heap snapshot's cells)
	// and UsedBefore is absent: JavaScriptCore tells no size without a
	// snapshot, which collects garbage first.
	UsedBefore uint64 `json:"usedBefore,omitempty"`
	UsedAfter  uint64 `json:"usedAfter"`
}

// CensusArgs are the parameters of the census command.
type CensusArgs struct {
	// Breakdown is takeCensus's breakdown; absent means the default.
	Breakdown json.RawMessage `json:"breakdown,omitempty"`
	// Targets is "page" (the default) or "all".
	Targets string `json:"targets,omitempty"`
}

// TargetCensus is one isolate's census in a "targets": "all" reply.
type TargetCensus struct {
	Type     string `json:"type"` // "page", "iframe" or "worker"
	URL      string `json:"url"`
	TargetID string `json:"targetId"`
	Census   any    `json:"census"` // null if Error is set
	// Error says why a frame or worker has no census (it went away, or
	// its snapshot failed).
	Error string `json:"error,omitempty"`
}

// AllCensus is the reply to a "targets": "all" census.
type AllCensus struct {
	Targets []TargetCensus `json:"targets"`
}

// LiveObjectGroup is the live objects of one class allocated at one
// stack, after WebKit's live object profiler (instanceSize, createdFrom).
type LiveObjectGroup struct {
	// CreatedFrom is the allocation stack, youngest frame first; empty for
	// objects allocated with no JavaScript on the stack; null on WebKit,
	// which keeps no allocation stacks.
	CreatedFrom []Frame `json:"createdFrom"`
	// Class is the JavaScript class (heapsnapshot.Snapshot.ClassName), or
	// the V8 node type in parentheses for what is not a JavaScript object:
	// "(string)", "(array)", "(code)", ...
	Class string `json:"class"`
	Count int64  `json:"count"`
	// InstanceSize is the bytes the group's objects use directly (the sum
	// of their self sizes).
	InstanceSize int64 `json:"instanceSize"`
}

// LiveObjects is the reply of live-objects/stop.
type LiveObjects struct {
	// LiveObjects are the groups, largest InstanceSize first.
	LiveObjects  []LiveObjectGroup `json:"liveObjects"`
	Count        int64             `json:"count"`
	InstanceSize int64             `json:"instanceSize"`
}

// Frame is one frame of an allocation stack. The JSON names are those of
// SpiderMonkey's SavedFrame.
type Frame struct {
	FunctionDisplayName string `json:"functionDisplayName"`
	Source              string `json:"source"`   // script URL or name
	SourceID            int    `json:"sourceId"` // V8 script id
	Line                int    `json:"line"`     // 1-based; 0 if unknown
	Column              int    `json:"column"`   // 1-based; 0 if unknown
}
