package chromium

// These tests run a force against a fake DevTools endpoint (package
// cdptest) that plays a page with the V8 debugger's pause: they check the
// order of a force's steps and that the page is always resumed. The e2e
// tests of package forcesample count the samples in Chromium.

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/wdext/wdext/engine/chromium/cdp/cdptest"
	"github.com/wdext/wdext/wire"
)

// pausingPage is a fake browser with one page whose debugger pauses at a
// debugger statement (unless pauses are skipped) and answers the paused
// evaluation once resumed. tracingErr, if set, is the error of
// Tracing.start after the first (a force's first one is its warm-up).
type pausingPage struct {
	tracingErr string
	starts     int

	mu      sync.Mutex
	calls   []string // methods in order; evaluations as "eval <expression>"
	paused  bool
	skip    bool
	held    *cdptest.Request
	enabled bool
	stream  []byte // the trace's, left to read
}

func (p *pausingPage) serve(t *testing.T) *fakeDevTools {
	return cdptest.NewServer(t, func(c *cdptest.Conn, req cdptest.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		call := req.Method
		var params struct {
			Expression string `json:"expression"`
			Skip       bool   `json:"skip"`
		}
		_ = json.Unmarshal(req.Params, &params)
		if req.Method == "Runtime.evaluate" {
			call = "eval " + params.Expression
		}
		p.calls = append(p.calls, call)
		switch req.Method {
		case "Target.getTargets":
			c.Reply(req, map[string]any{"targetInfos": []map[string]any{
				{"targetId": pageID, "type": "page", "url": "http://example.test/page.html"},
			}})
		case "Target.attachToTarget":
			c.Reply(req, map[string]any{"sessionId": "S1"})
		case "Inspector.enable", "Debugger.disable":
			if req.Method == "Debugger.disable" {
				p.enabled = false
			}
			c.Reply(req, map[string]any{})
		case "Runtime.getIsolateId":
			c.Reply(req, map[string]any{"id": "iso-1"})
		case "Page.createIsolatedWorld":
			c.Reply(req, map[string]any{"executionContextId": 7})
		case "Debugger.enable":
			p.enabled = true
			c.Reply(req, map[string]any{"debuggerId": "D1"})
		case "Debugger.setSkipAllPauses":
			p.skip = params.Skip
			c.Reply(req, map[string]any{})
		case "Runtime.evaluate":
			if strings.HasPrefix(params.Expression, "debugger") && p.enabled && !p.skip && !p.paused {
				p.paused, p.held = true, &req
				c.Event(req.SessionID, "Debugger.paused", map[string]any{"callFrames": []any{}, "reason": "other"})
				return
			}
			c.Reply(req, map[string]any{"result": map[string]any{"type": "undefined"}})
		case "Debugger.resume":
			if !p.paused {
				c.ReplyError(req, -32000, "Can only perform operation while paused.")
				return
			}
			p.paused = false
			c.Reply(req, map[string]any{})
			c.Reply(*p.held, map[string]any{"result": map[string]any{"type": "undefined"}})
		case "Tracing.start":
			p.starts++
			if p.tracingErr != "" && p.starts > 1 {
				c.ReplyError(req, -32000, p.tracingErr)
				return
			}
			c.Reply(req, map[string]any{})
		case "Tracing.end":
			c.Reply(req, map[string]any{})
			p.stream = protoTrace(fakeEvent{"TimeStamp", 2, 2, map[string]any{"message": triggerLabel(pageID), "sampleTraceId": 1}})
			c.Event("", "Tracing.tracingComplete", map[string]any{"dataLossOccurred": false, "stream": "stream-1", "traceFormat": "proto"})
		case "IO.read":
			// In two reads, the second one at the end.
			c.Reply(req, map[string]any{"base64Encoded": true, "data": base64.StdEncoding.EncodeToString(p.stream), "eof": len(p.stream) == 0})
			p.stream = nil
		case "IO.close":
			c.Reply(req, map[string]any{})
		}
	}, nil)
}

// index is the position of the first call with the prefix, -1 if none.
func (p *pausingPage) index(prefix string) int { return p.indexAfter(prefix, -1) }

// indexAfter is the position of the first call with the prefix after
// position i, -1 if none.
func (p *pausingPage) indexAfter(prefix string, i int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	j := slices.IndexFunc(p.calls[i+1:], func(c string) bool { return strings.HasPrefix(c, prefix) })
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

func (p *pausingPage) count(prefix string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

func shortIdle(t *testing.T, d time.Duration) {
	old := debuggerIdle
	debuggerIdle = d
	t.Cleanup(func() { debuggerIdle = old })
}

// A force warms tracing up in an isolate it has not traced yet, pauses
// the page, arms, samples while both hold, disarms, then resumes; the
// debugger it turned on serves the next force and goes off once forces
// stop coming.
func TestForceSampleHoldsThePage(t *testing.T) {
	shortIdle(t, 300*time.Millisecond)
	p := &pausingPage{}
	e := bindWith(t, p.serve(t).Addr(), &fakeDriver{window: pageID})
	var reports []ForceReport
	var mu sync.Mutex
	defer ObserveForces(func(r ForceReport) { mu.Lock(); reports = append(reports, r); mu.Unlock() })()

	assert.NilError(t, e.ForceSample(testContext(t)))
	warm, warmed := p.index("Tracing.start"), p.index("Tracing.end")
	enable, pause := p.index("Debugger.enable"), p.index("eval debugger")
	start, trigger := p.indexAfter("Tracing.start", pause), p.index("eval console.timeStamp")
	end, resume := p.indexAfter("Tracing.end", trigger), p.index("Debugger.resume")
	assert.Check(t, warm >= 0 && warm < warmed && warmed < enable && enable < pause && pause < start && start < trigger && trigger < end && end < resume,
		"warm-up %d-%d, enable %d, pause %d, start %d, trigger %d, end %d, resume %d", warm, warmed, enable, pause, start, trigger, end, resume)
	p.mu.Lock()
	assert.Check(t, !p.paused, "the page is left paused")
	assert.Check(t, p.skip, "pauses are not skipped between forces")
	p.mu.Unlock()

	assert.NilError(t, e.ForceSample(testContext(t)))
	assert.Check(t, is.Equal(p.count("Tracing.start"), 3), "the second force warmed up again")
	assert.Check(t, is.Equal(p.count("Debugger.enable"), 1), "the second force enabled the debugger again")
	assert.Check(t, is.Equal(p.count("eval debugger"), 2))
	assert.Check(t, is.Equal(p.count("Debugger.disable"), 0))
	deadline := time.Now().Add(prompt)
	for p.count("Debugger.disable") == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	assert.Check(t, is.Equal(p.count("Debugger.disable"), 1), "the debugger stays on")

	mu.Lock()
	defer mu.Unlock()
	assert.Assert(t, is.Len(reports, 2))
	assert.Check(t, is.Equal(reports[0].Isolates, 1))
	assert.Check(t, is.Equal(reports[0].Samples, 1))
	assert.Check(t, is.Len(reports[0].Strays, 0))
	assert.Check(t, reports[0].Verified)
}

// A force that fails once the page is paused (here the browser refuses
// tracing) still resumes it.
func TestForceSampleResumesAfterFailure(t *testing.T) {
	p := &pausingPage{tracingErr: "Tracing has already been started (possibly in another tab)."}
	e := bindWith(t, p.serve(t).Addr(), &fakeDriver{window: pageID})
	err := e.ForceSample(testContext(t))
	assert.Check(t, is.Equal(codeOf(err), wire.UnsupportedOperation), "%v", err)
	assert.Check(t, p.index("Debugger.resume") > p.indexAfter("Tracing.start", p.index("eval debugger")))
	p.mu.Lock()
	defer p.mu.Unlock()
	assert.Check(t, !p.paused, "the page is left paused")
}

// fakeEvent is a track event of a fake trace: its name, thread, and
// data (strings and integers).
type fakeEvent struct {
	name     string
	pid, tid int64
	data     map[string]any
}

// protoTrace is a Perfetto trace of the events as Chromium writes them:
// each thread's events in a sequence of its own, which describes the
// thread's track first; the event names and the "data" argument's name
// interned, the sampleTraceId as an integer; the track given by the
// sequence's defaults, or (events of pid 3) by the event.
func protoTrace(events ...fakeEvent) []byte {
	var trace []byte
	seqs := map[thread]uint64{}
	iid := uint64(0)
	for _, ev := range events {
		th := thread{ev.pid, ev.tid}
		seq, ok := seqs[th]
		if !ok {
			seq = uint64(len(seqs) + 1)
			seqs[th] = seq
			var td, desc, defaults, packet []byte
			td = pbUint(td, threadPid, uint64(ev.pid))
			td = pbUint(td, threadTid, uint64(ev.tid))
			desc = pbUint(desc, trackUUID, 1000+seq)
			desc = pbBytes(desc, trackThread, td)
			defaults = pbBytes(nil, defaultsTrackEvent, pbUint(nil, defaultsTrackUUID, 1000+seq))
			packet = pbUint(packet, packetSequenceFlags, seqIncrementalCleared)
			packet = pbBytes(packet, packetDefaults, defaults)
			packet = pbBytes(packet, packetTrackDescriptor, desc)
			packet = pbUint(packet, packetSequenceID, seq)
			trace = pbBytes(trace, tracePacket, packet)
		}
		iid++
		var interned, data, event, packet []byte
		interned = pbBytes(interned, internedNames, pbBytes(pbUint(nil, 1, iid), 2, []byte(ev.name)))
		interned = pbBytes(interned, internedArgNames, pbBytes(pbUint(nil, 1, iid), 2, []byte("data")))
		data = pbUint(data, argNameIID, iid)
		for _, k := range slices.Sorted(maps.Keys(ev.data)) {
			entry := pbBytes(nil, argName, []byte(k))
			switch v := ev.data[k].(type) {
			case string:
				entry = pbBytes(entry, argString, []byte(v))
			case int:
				entry = pbUint(entry, 3, uint64(v)) // uint_value
			}
			data = pbBytes(data, argDict, entry)
		}
		event = pbUint(event, eventNameIID, iid)
		if ev.pid == 3 {
			event = pbUint(event, eventTrack, 1000+seq)
		}
		event = pbBytes(event, eventArgument, data)
		packet = pbBytes(packet, packetInternedData, interned)
		packet = pbBytes(packet, packetTrackEvent, event)
		packet = pbUint(packet, packetSequenceID, seq)
		trace = pbBytes(trace, tracePacket, packet)
	}
	return trace
}

// The trace of a window tells the triggers from the other events that
// took a sample on the same threads.
func TestReadForceTrace(t *testing.T) {
	trace := protoTrace(
		fakeEvent{"TimeStamp", 2, 2, map[string]any{"message": "wdext forcesample A", "sampleTraceId": 1}},
		fakeEvent{"FunctionCall", 2, 2, map[string]any{"functionName": "tick", "url": "http://x/p.js", "sampleTraceId": 2}},
		fakeEvent{"Paint", 2, 2, map[string]any{"frame": "F"}},
		fakeEvent{"FunctionCall", 3, 3, map[string]any{"functionName": "other", "sampleTraceId": 3}},
	)
	tr, err := readForceTrace(trace)
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
	tr, err = readForceTrace(pbBytes(slices.Clone(trace), tracePacket, packet))
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(tr.sampling[thread{2, 2}], []string{"FunctionCall tick http://x/p.js", "FunctionCall (thread unknown)"}))

	_, err = readForceTrace(trace[:len(trace)-3])
	assert.Check(t, err != nil, "a truncated trace reads")
}
