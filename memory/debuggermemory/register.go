package debuggermemory

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"

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

// decodeStrict decodes a command's parameters like webdriver.DecodeArgs,
// and also rejects members other than known, so that a misspelt option is
// an error rather than silently ignored.
func decodeStrict(body []byte, v any, known ...string) error {
	var members map[string]json.RawMessage
	if err := webdriver.DecodeArgs(body, &members); err != nil {
		return err
	}
	var unknown []string
	for k := range members {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		want := "no parameters"
		if len(known) > 0 {
			want = "parameters " + strings.Join(known, ", ")
		}
		return webdriver.Errorf(webdriver.InvalidArgument, "unknown parameter %q (the command takes %s)", unknown[0], want)
	}
	return webdriver.DecodeArgs(body, v)
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
