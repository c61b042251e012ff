package memory

import "github.com/wdext/wdext/wire"

// The Measure Memory API's result dictionaries are wire types (package
// wire), so that clients decode them without this package.
type (
	MemoryMeasurement          = wire.MemoryMeasurement
	MemoryBreakdownEntry       = wire.MemoryBreakdownEntry
	MemoryAttribution          = wire.MemoryAttribution
	MemoryAttributionContainer = wire.MemoryAttributionContainer
)

// Sentinel and scope strings of a MemoryAttribution (§2.1).
const (
	CrossOriginURL             = wire.CrossOriginURL
	ScopeWindow                = wire.ScopeWindow
	ScopeDedicatedWorker       = wire.ScopeDedicatedWorker
	ScopeSharedWorker          = wire.ScopeSharedWorker
	ScopeServiceWorker         = wire.ScopeServiceWorker
	ScopeCrossOriginAggregated = wire.ScopeCrossOriginAggregated
)
