package forcetrace

import (
	"slices"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// The trace of a window tells the triggers from the other events that
// took a sample on the same threads.
func TestReadForceTrace(t *testing.T) {
	trace := Trace(
		Event{"TimeStamp", 2, 2, map[string]any{"message": "wdext forcesample A", "sampleTraceId": 1}, false},
		Event{"FunctionCall", 2, 2, map[string]any{"functionName": "tick", "url": "http://x/p.js", "sampleTraceId": 2}, false},
		Event{"Paint", 2, 2, map[string]any{"frame": "F"}, false},
		Event{"FunctionCall", 3, 3, map[string]any{"functionName": "other", "sampleTraceId": 3}, true},
	)
	tr, err := readTrace(trace)
	assert.NilError(t, err)
	assert.Check(t, is.Len(tr.hits, 1))
	assert.Check(t, tr.hits["wdext forcesample A"] == thread{2, 2}, "%v", tr.hits)
	assert.Check(t, is.DeepEqual(tr.sampling[thread{2, 2}], []string{"FunctionCall tick http://x/p.js"}))
	assert.Check(t, is.DeepEqual(tr.sampling[thread{3, 3}], []string{"FunctionCall other"}))

	// A sample on a track the trace does not describe counts on every
	// thread sampled.
	var event, packet []byte
	event = pbBytes(event, eventName, []byte("FunctionCall"))
	event = pbUint(event, eventTrack, 77)
	event = pbBytes(event, eventArgument, pbBytes(pbBytes(nil, argName, []byte("data")), argDict,
		pbUint(pbBytes(nil, argName, []byte("sampleTraceId")), 3, 4)))
	packet = pbBytes(packet, packetTrackEvent, event)
	packet = pbUint(packet, packetSequenceID, 99)
	tr, err = readTrace(pbBytes(slices.Clone(trace), tracePacket, packet))
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(tr.sampling[thread{2, 2}], []string{"FunctionCall tick http://x/p.js", "FunctionCall (thread unknown)"}))

	_, err = readTrace(trace[:len(trace)-3])
	assert.Check(t, err != nil, "a truncated trace reads")
}
