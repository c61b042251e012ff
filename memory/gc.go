package memory

import "github.com/wdext/wdext/wire"

// The gc command's value is a wire type.
type (
	GCResult = wire.GCResult
	GCTarget = wire.GCTarget
)
