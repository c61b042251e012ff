package debuggermemory

import (
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

// The commands' URI templates (see package wire).
const (
	CensusPath           = wire.CensusPath
	AllocationsPath      = wire.AllocationsPath
	DrainPath            = wire.DrainPath
	GCLogPath            = wire.GCLogPath
	LiveObjectsStartPath = wire.LiveObjectsStartPath
	LiveObjectsStopPath  = wire.LiveObjectsStopPath
)

// Register adds the Debugger.Memory-style commands to srv.
func Register(srv *webdriver.Server) {
	srv.Handle("POST", CensusPath, censusCommand)
	srv.Handle("POST", AllocationsPath, allocationsCommand)
	srv.Handle("POST", DrainPath, drainCommand)
	srv.Handle("POST", GCLogPath, gcLogCommand)
	srv.Handle("GET", GCLogPath, gcEntriesCommand)
	srv.Handle("POST", LiveObjectsStartPath, liveStartCommand)
	srv.Handle("POST", LiveObjectsStopPath, liveStopCommand)
}

// decodeStrict decodes a command's parameters: see webdriver.DecodeParams.
func decodeStrict(body []byte, v any, known ...string) error {
	return webdriver.DecodeParams(body, v, known...)
}

// The commands' parameters and values are wire types.
type (
	CensusArgs         = wire.CensusArgs
	TargetCensus       = wire.TargetCensus
	AllCensus          = wire.AllCensus
	AllocationSettings = wire.AllocationSettings
	AllocationArgs     = wire.AllocationArgs
	AllocationEntry    = wire.AllocationEntry
	AllocationsLog     = wire.AllocationsLog
	GCSlice            = wire.GCSlice
	GCEntry            = wire.GCEntry
	GCLog              = wire.GCLog
	GCLogState         = wire.GCLogState
	GCLogArgs          = wire.GCLogArgs
	LiveObjectGroup    = wire.LiveObjectGroup
	LiveObjects        = wire.LiveObjects
)
