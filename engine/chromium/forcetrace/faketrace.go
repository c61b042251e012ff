package forcetrace

import (
	"maps"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// Event is a track event of a fake trace: its name, thread, and "data"
// argument (strings and integers). With OwnTrack the event names its
// track; without, its sequence's defaults do.
type Event struct {
	Name     string
	Pid, Tid int64
	Data     map[string]any
	OwnTrack bool
}

// Trace is a Perfetto trace of the events as Chromium writes them: each
// thread's events in a sequence of its own, which describes the thread's
// track first; the event names and the "data" argument's name interned,
// the sampleTraceId as an integer.
func Trace(events ...Event) []byte {
	var trace []byte
	seqs := map[thread]uint64{}
	iid := uint64(0)
	for _, ev := range events {
		th := thread{ev.Pid, ev.Tid}
		seq, ok := seqs[th]
		if !ok {
			seq = uint64(len(seqs) + 1)
			seqs[th] = seq
			trace = pbBytes(trace, tracePacket, threadPacket(th, seq))
		}
		iid++
		trace = pbBytes(trace, tracePacket, eventPacket(ev, seq, iid))
	}
	return trace
}

// threadPacket starts the sequence of a thread: it describes the
// thread's track, the default track of its events.
func threadPacket(th thread, seq uint64) []byte {
	var td, desc, defaults, packet []byte
	td = pbUint(td, threadPid, uint64(th.pid))
	td = pbUint(td, threadTid, uint64(th.tid))
	desc = pbUint(desc, trackUUID, 1000+seq)
	desc = pbBytes(desc, trackThread, td)
	defaults = pbBytes(nil, defaultsTrackEvent, pbUint(nil, defaultsTrackUUID, 1000+seq))
	packet = pbUint(packet, packetSequenceFlags, seqIncrementalCleared)
	packet = pbBytes(packet, packetDefaults, defaults)
	packet = pbBytes(packet, packetTrackDescriptor, desc)
	return pbUint(packet, packetSequenceID, seq)
}

// eventPacket is the packet of an event in its sequence, with its name
// and argument name interned as iid.
func eventPacket(ev Event, seq, iid uint64) []byte {
	var interned, data, event, packet []byte
	interned = pbBytes(interned, internedNames, pbBytes(pbUint(nil, 1, iid), 2, []byte(ev.Name)))
	interned = pbBytes(interned, internedArgNames, pbBytes(pbUint(nil, 1, iid), 2, []byte("data")))
	data = pbUint(data, argNameIID, iid)
	for _, k := range slices.Sorted(maps.Keys(ev.Data)) {
		entry := pbBytes(nil, argName, []byte(k))
		switch v := ev.Data[k].(type) {
		case string:
			entry = pbBytes(entry, argString, []byte(v))
		case int:
			entry = pbUint(entry, 3, uint64(v)) // uint_value
		}
		data = pbBytes(data, argDict, entry)
	}
	event = pbUint(event, eventNameIID, iid)
	if ev.OwnTrack {
		event = pbUint(event, eventTrack, 1000+seq)
	}
	event = pbBytes(event, eventArgument, data)
	packet = pbBytes(packet, packetInternedData, interned)
	packet = pbBytes(packet, packetTrackEvent, event)
	return pbUint(packet, packetSequenceID, seq)
}

func pbUint(b []byte, field int, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(b, protowire.Number(field), protowire.VarintType), v)
}

func pbBytes(b []byte, field int, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, protowire.Number(field), protowire.BytesType), v)
}
