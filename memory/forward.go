package memory

import (
	"github.com/wdext/wdext/memory/measurement"
	"github.com/wdext/wdext/wire"
)

// Validate is measurement.Validate, kept under this name only for
// webdriver/wdclient's test, which still calls memory.Validate. Once that
// test names measurement.Validate, delete this file.
func Validate(m wire.MemoryMeasurement) error { return measurement.Validate(m) }
