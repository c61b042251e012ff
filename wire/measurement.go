package wire

import "encoding/json"

// Sentinel and scope strings of a MemoryAttribution (§2.1). The scope of a
// same-origin realm is the identifier of its global object's interface.
const (
	CrossOriginURL = "cross-origin-url"

	ScopeWindow                = "Window"
	ScopeDedicatedWorker       = "DedicatedWorkerGlobalScope"
	ScopeSharedWorker          = "SharedWorkerGlobalScope"
	ScopeServiceWorker         = "ServiceWorkerGlobalScope"
	ScopeCrossOriginAggregated = "cross-origin-aggregated"
)

// MemoryMeasurement is the measure command's value: the dictionary measureUserAgentSpecificMemory()
// resolves to (§2.1).
type MemoryMeasurement struct {
	Bytes     uint64                 `json:"bytes"`
	Breakdown []MemoryBreakdownEntry `json:"breakdown"`
}

// MemoryBreakdownEntry is one part of MemoryMeasurement.Bytes and the realms
// and implementation-defined memory types it belongs to (§2.1).
type MemoryBreakdownEntry struct {
	Bytes       uint64              `json:"bytes"`
	Attribution []MemoryAttribution `json:"attribution"`
	Types       []string            `json:"types"`
}

// MemoryAttribution names one realm, or a cross-origin aggregate of realms,
// that uses the memory of a breakdown entry (§2.1).
type MemoryAttribution struct {
	// URL is the realm's creation URL, or CrossOriginURL.
	URL string `json:"url"`
	// Container is the element in a same-origin document that (maybe
	// indirectly) holds the realm. The spec omits the member, rather than
	// sending null, when there is none (§3.3 create a new memory attribution).
	Container *MemoryAttributionContainer `json:"container,omitempty"`
	Scope     string                      `json:"scope"`
}

// MemoryAttributionContainer identifies a container element by attributes
// the measuring page can already read (§2.1).
type MemoryAttributionContainer struct {
	ID  string `json:"id"`
	Src string `json:"src"`
}

// MarshalJSON writes a nil Breakdown as [] rather than null: browsers always
// return an array, and pages iterate it without checking.
func (m MemoryMeasurement) MarshalJSON() ([]byte, error) {
	type plain MemoryMeasurement // no methods, so no recursion
	if m.Breakdown == nil {
		m.Breakdown = []MemoryBreakdownEntry{}
	}
	return json.Marshal(plain(m))
}

// MarshalJSON writes nil Attribution and Types as [], as browsers do; the
// spec's empty entry is {"bytes":0,"attribution":[],"types":[]}.
func (e MemoryBreakdownEntry) MarshalJSON() ([]byte, error) {
	type plain MemoryBreakdownEntry
	if e.Attribution == nil {
		e.Attribution = []MemoryAttribution{}
	}
	if e.Types == nil {
		e.Types = []string{}
	}
	return json.Marshal(plain(e))
}

// IsEmpty reports whether e is the spec's deliberately empty entry.
func (e MemoryBreakdownEntry) IsEmpty() bool {
	return e.Bytes == 0 && len(e.Attribution) == 0 && len(e.Types) == 0
}
