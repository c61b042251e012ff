package webkitgtk

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStopToken(t *testing.T) {
	msg := `{"message":{"source":"console-api","level":"debug","text":"wdext.profiler.stop","parameters":[{"type":"string","value":"wdext.profiler.stop"},{"type":"string","value":"abc:1"}]}}`
	if got := stopToken(json.RawMessage(msg)); got != "abc:1" {
		t.Errorf("stopToken = %q", got)
	}
	other := strings.Replace(msg, `"value":"wdext.profiler.stop"`, `"value":"hello"`, 1)
	if got := stopToken(json.RawMessage(other)); got != "" {
		t.Errorf("stopToken of another message = %q", got)
	}
}
