package debuggermemory

import (
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

// Register adds the Debugger.Memory-style commands to srv.
func Register(srv *webdriver.Server) {
	srv.Handle("POST", wire.CensusPath, censusCommand)
	srv.Handle("POST", wire.AllocationsPath, allocationsCommand)
	srv.Handle("POST", wire.DrainPath, drainCommand)
	srv.Handle("POST", wire.GCLogPath, gcLogCommand)
	srv.Handle("GET", wire.GCLogPath, gcEntriesCommand)
	srv.Handle("POST", wire.LiveObjectsStartPath, liveStartCommand)
	srv.Handle("POST", wire.LiveObjectsStopPath, liveStopCommand)
}

// decodeStrict decodes a command's parameters: see webdriver.DecodeParams.
func decodeStrict(body []byte, v any, known ...string) error {
	return webdriver.DecodeParams(body, v, known...)
}
