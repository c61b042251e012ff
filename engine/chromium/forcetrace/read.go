package forcetrace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// pbField is one field of a protobuf message: its number, and its value
// as an integer (varint and fixed wire types) or bytes (length-delimited).
type pbField struct {
	num   int
	isLen bool
	u     uint64
	b     []byte
}

var errProto = errors.New("malformed protobuf")

// pbFields calls f with each field of msg in order (protowire does the
// wire format; groups are not accepted).
func pbFields(msg []byte, f func(pbField) error) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return errProto
		}
		msg = msg[n:]
		fl := pbField{num: int(num)}
		switch typ {
		case protowire.VarintType:
			fl.u, n = protowire.ConsumeVarint(msg)
		case protowire.Fixed64Type:
			fl.u, n = protowire.ConsumeFixed64(msg)
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(msg)
			fl.u = uint64(v)
		case protowire.BytesType:
			fl.isLen = true
			fl.b, n = protowire.ConsumeBytes(msg)
		default:
			return errProto
		}
		if n < 0 {
			return errProto
		}
		msg = msg[n:]
		if err := f(fl); err != nil {
			return err
		}
	}
	return nil
}

// Field numbers of perfetto.protos messages (protos/perfetto/trace).
const (
	tracePacket = 1 // Trace.packet

	packetTrackEvent      = 11 // TracePacket.track_event
	packetInternedData    = 12 // TracePacket.interned_data
	packetSequenceFlags   = 13 // TracePacket.sequence_flags
	packetSequenceID      = 10 // TracePacket.trusted_packet_sequence_id
	packetStateCleared    = 41 // TracePacket.incremental_state_cleared
	packetDefaults        = 59 // TracePacket.trace_packet_defaults
	packetTrackDescriptor = 60 // TracePacket.track_descriptor
	seqIncrementalCleared = 1  // SEQ_INCREMENTAL_STATE_CLEARED

	defaultsTrackEvent = 11 // TracePacketDefaults.track_event_defaults
	defaultsTrackUUID  = 11 // TrackEventDefaults.track_uuid

	internedCategories = 1  // InternedData.event_categories
	internedNames      = 2  // InternedData.event_names
	internedArgNames   = 3  // InternedData.debug_annotation_names
	internedArgStrings = 29 // InternedData.debug_annotation_string_values

	eventNameIID  = 10 // TrackEvent.name_iid
	eventName     = 23 // TrackEvent.name
	eventTrack    = 11 // TrackEvent.track_uuid
	eventArgument = 4  // TrackEvent.debug_annotations

	argNameIID    = 1  // DebugAnnotation.name_iid
	argName       = 10 // DebugAnnotation.name
	argString     = 6  // DebugAnnotation.string_value
	argStringIID  = 17 // DebugAnnotation.string_value_iid
	argLegacyJSON = 9  // DebugAnnotation.legacy_json_value
	argDict       = 11 // DebugAnnotation.dict_entries
	argArray      = 12 // DebugAnnotation.array_values

	trackUUID   = 1 // TrackDescriptor.uuid
	trackParent = 5 // TrackDescriptor.parent_uuid
	trackThread = 4 // TrackDescriptor.thread
	threadPid   = 1 // ThreadDescriptor.pid
	threadTid   = 2 // ThreadDescriptor.tid
)

// sequence is the incremental state of one packet sequence (one trace
// writer: a thread of a process): its interned strings and defaults.
type sequence struct {
	interned map[int]map[uint64]string // by InternedData field
	track    uint64                    // the default track of its events
}

// trackEvent is a track event of the trace, resolved.
type trackEvent struct {
	name   string
	track  uint64
	seq    uint64
	data   map[string]string // the string entries of its "data" argument
	sample bool              // it took a sample (it has a sampleTraceId)
}

// windowTrace is what a force's trace says of its samples.
type windowTrace struct {
	// hits are the triggers seen, by label, with their thread.
	hits map[string]thread
	// sampling are the other events that took a sample, by thread.
	sampling map[thread][]string
}

type thread struct{ pid, tid int64 }

// triggerPrefix begins the label of every trigger (a console.timeStamp
// of the engine's, one per isolate).
const triggerPrefix = "wdext forcesample "

// readTrace reads a force's trace (a perfetto.protos.Trace): the
// triggers, by label, with their thread, and every other event that took
// a sample (those carry a sampleTraceId in their data), by thread.
func readTrace(trace []byte) (*windowTrace, error) {
	r := &traceReader{seqs: map[uint64]*sequence{}, threads: map[uint64]thread{}, parents: map[uint64]uint64{}}
	if err := pbFields(trace, r.packet); err != nil {
		return nil, fmt.Errorf("reading the trace: %w", err)
	}
	return r.window(), nil
}

// traceReader is the state of a trace read so far.
type traceReader struct {
	seqs    map[uint64]*sequence
	threads map[uint64]thread // thread tracks, by uuid
	parents map[uint64]uint64 // the parent of a track, by uuid
	events  []trackEvent
}

// packet is the fields of a TracePacket that the reader uses.
type packet struct {
	id, flags                             uint64
	cleared                               bool
	interned, defaults, event, descriptor []byte
}

// readPacket reads the fields of a TracePacket that the reader uses.
func readPacket(msg []byte) (packet, error) {
	var p packet
	err := pbFields(msg, func(f pbField) error {
		switch f.num {
		case packetSequenceID:
			p.id = f.u
		case packetSequenceFlags:
			p.flags = f.u
		case packetStateCleared:
			p.cleared = f.u != 0
		case packetInternedData:
			p.interned = f.b
		case packetDefaults:
			p.defaults = f.b
		case packetTrackEvent:
			p.event = f.b
		case packetTrackDescriptor:
			p.descriptor = f.b
		}
		return nil
	})
	return p, err
}

// packet reads a field of the Trace: a TracePacket's state goes to its
// sequence, its track descriptor to the tracks, its event to the events.
func (r *traceReader) packet(f pbField) error {
	if f.num != tracePacket || !f.isLen {
		return nil
	}
	p, err := readPacket(f.b)
	if err != nil {
		return err
	}
	s := r.seqs[p.id]
	if s == nil || p.cleared || p.flags&seqIncrementalCleared != 0 {
		s = &sequence{interned: map[int]map[uint64]string{}}
		r.seqs[p.id] = s
	}
	if p.interned != nil {
		if err := s.intern(p.interned); err != nil {
			return err
		}
	}
	if p.defaults != nil {
		if err := s.defaults(p.defaults); err != nil {
			return err
		}
	}
	if p.descriptor != nil {
		if err := readTrack(p.descriptor, r.threads, r.parents); err != nil {
			return err
		}
	}
	if p.event != nil {
		ev, err := s.event(p.event)
		if err != nil {
			return err
		}
		ev.seq = p.id
		r.events = append(r.events, ev)
	}
	return nil
}

// threadOf is the thread of an event's track, or of the nearest track
// above it that is a thread's.
func (r *traceReader) threadOf(ev trackEvent) thread {
	for t, hops := ev.track, 0; hops < 8; t, hops = r.parents[t], hops+1 {
		if th, ok := r.threads[t]; ok {
			return th
		}
	}
	// A track the trace does not describe: its own, so that a sample
	// there is counted as a stray of every isolate (window).
	return thread{-1, int64(ev.seq)}
}

// window sorts the events read: the triggers, and the others that took
// a sample, by thread; those of a thread unknown count on every thread a
// trigger ran on.
func (r *traceReader) window() *windowTrace {
	tr := &windowTrace{hits: map[string]thread{}, sampling: map[thread][]string{}}
	var unplaced []string
	for _, ev := range r.events {
		th := r.threadOf(ev)
		if ev.name == "TimeStamp" && strings.HasPrefix(ev.data["message"], triggerPrefix) {
			tr.hits[ev.data["message"]] = th
			continue
		}
		if !ev.sample {
			continue
		}
		what := strings.Join(strings.Fields(strings.Join([]string{ev.name, ev.data["type"], ev.data["functionName"], ev.data["url"]}, " ")), " ")
		if th.pid < 0 {
			unplaced = append(unplaced, what+" (thread unknown)")
			continue
		}
		tr.sampling[th] = append(tr.sampling[th], what)
	}
	if len(unplaced) > 0 {
		for _, th := range tr.hits {
			tr.sampling[th] = append(tr.sampling[th], unplaced...)
		}
	}
	return tr
}

// defaults reads a TracePacketDefaults: the sequence's default track.
func (s *sequence) defaults(msg []byte) error {
	return pbFields(msg, func(f pbField) error {
		if f.num != defaultsTrackEvent || !f.isLen {
			return nil
		}
		return pbFields(f.b, func(f pbField) error {
			if f.num == defaultsTrackUUID && !f.isLen {
				s.track = f.u
			}
			return nil
		})
	})
}

// intern adds an InternedData's strings to the sequence's.
func (s *sequence) intern(msg []byte) error {
	return pbFields(msg, func(f pbField) error {
		switch f.num {
		case internedCategories, internedNames, internedArgNames, internedArgStrings:
		default:
			return nil
		}
		if !f.isLen {
			return errProto
		}
		var iid uint64
		var name string
		if err := pbFields(f.b, func(e pbField) error {
			switch {
			case e.num == 1 && !e.isLen: // iid
				iid = e.u
			case e.num == 2 && e.isLen: // name, or str
				name = string(e.b)
			}
			return nil
		}); err != nil {
			return err
		}
		if s.interned[f.num] == nil {
			s.interned[f.num] = map[uint64]string{}
		}
		s.interned[f.num][iid] = name
		return nil
	})
}

// event resolves a TrackEvent with the sequence's state.
func (s *sequence) event(msg []byte) (trackEvent, error) {
	ev := trackEvent{track: s.track, data: map[string]string{}}
	// Any mention of the key, in a name, a legacy JSON value or a string,
	// counts: a stray must not go unseen because of its encoding.
	ev.sample = bytes.Contains(msg, []byte("sampleTraceId"))
	err := pbFields(msg, func(f pbField) error {
		switch f.num {
		case eventNameIID:
			ev.name = s.interned[internedNames][f.u]
		case eventName:
			ev.name = string(f.b)
		case eventTrack:
			ev.track = f.u
		case eventArgument:
			if !f.isLen {
				return errProto
			}
			return s.walk(f.b, nil, 0, func(path []string, value string) {
				switch {
				case len(path) > 0 && path[len(path)-1] == "sampleTraceId":
					ev.sample = true
				case len(path) == 2 && path[0] == "data":
					ev.data[path[1]] = value
				case len(path) == 1 && path[0] == "data" && strings.HasPrefix(value, "{"):
					// A legacy JSON value.
					var data map[string]any
					_ = json.Unmarshal([]byte(value), &data)
					for k, v := range data {
						if s, ok := v.(string); ok {
							ev.data[k] = s
						}
					}
				}
			})
		}
		return nil
	})
	return ev, err
}

// walk walks a DebugAnnotation, calling f with the path of names to it
// and each one below it, and its string value (empty for other kinds).
func (s *sequence) walk(msg []byte, path []string, depth int, f func([]string, string)) error {
	if depth > 16 {
		return errProto
	}
	var name, value string
	var nested [][]byte
	err := pbFields(msg, func(a pbField) error {
		switch a.num {
		case argNameIID:
			name = s.interned[internedArgNames][a.u]
		case argName:
			name = string(a.b)
		case argString:
			value = string(a.b)
		case argStringIID:
			value = s.interned[internedArgStrings][a.u]
		case argLegacyJSON:
			value = string(a.b)
		case argDict, argArray:
			if !a.isLen {
				return errProto
			}
			nested = append(nested, a.b)
		}
		return nil
	})
	if err != nil {
		return err
	}
	path = append(path, name)
	f(path, value)
	for _, n := range nested {
		if err := s.walk(n, path, depth+1, f); err != nil {
			return err
		}
	}
	return nil
}

// readTrack records a TrackDescriptor: the thread of a thread track, the
// parent of a track below one.
func readTrack(msg []byte, threads map[uint64]thread, parents map[uint64]uint64) error {
	var uuid, parent uint64
	var th *thread
	err := pbFields(msg, func(f pbField) error {
		switch f.num {
		case trackUUID:
			uuid = f.u
		case trackParent:
			parent = f.u
		case trackThread:
			if !f.isLen {
				return errProto
			}
			th = &thread{}
			return pbFields(f.b, func(t pbField) error {
				switch t.num {
				case threadPid:
					th.pid = int64(int32(t.u))
				case threadTid:
					th.tid = int64(int32(t.u))
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if th != nil {
		threads[uuid] = *th
	}
	if parent != 0 {
		parents[uuid] = parent
	}
	return nil
}
