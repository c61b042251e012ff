package webdriver

import (
	"github.com/wdext/wdext/wire"
)

// wantsStackSamples reads wdext's own new-session capability
// (wire.StackSamplesCapability) from a new-session request. It is left in
// the request, which drivers accept: they ignore a vendor's capability
// they do not know. It belongs in alwaysMatch: which firstMatch entry the
// driver picks is not wdext's to know.
func wantsStackSamples(req map[string]any) (bool, error) {
	caps, _ := req["capabilities"].(map[string]any)
	first, _ := caps["firstMatch"].([]any)
	for _, f := range first {
		if m, ok := f.(map[string]any); ok {
			if _, ok := m[wire.StackSamplesCapability]; ok {
				return false, wire.Errorf(wire.InvalidArgument, "%s goes in alwaysMatch: it is wdext's, and which firstMatch entry the driver picks is the driver's", wire.StackSamplesCapability)
			}
		}
	}
	always, _ := caps["alwaysMatch"].(map[string]any)
	v, ok := always[wire.StackSamplesCapability]
	if !ok {
		return false, nil
	}
	on, isBool := v.(bool)
	if !isBool {
		return false, wire.Errorf(wire.InvalidArgument, "%s must be a boolean, not %v", wire.StackSamplesCapability, v)
	}
	return on, nil
}
