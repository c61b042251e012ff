package chromium

// These tests run a force against a fake DevTools endpoint (package
// cdptest) that plays a page with the V8 debugger's pause: they check the
// order of a force's steps and that the page is always resumed, and
// (through package forcetrace's proxy, which reads the trace the engine
// closes unread) that the trace of the window shows the trigger. The e2e
// tests of package forcesample count the samples in Chromium.

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/wdext/wdext/engine/chromium/cdp/cdptest"
	"github.com/wdext/wdext/engine/chromium/forcetrace"
	"github.com/wdext/wdext/wire"
)

// pausingPage is a fake browser with one page whose debugger pauses at a
// debugger statement (unless pauses are skipped) and answers the paused
// evaluation once resumed. tracingErr, if set, is the error of every
// Tracing.start. Tracing calls are noted with the session they came on
// ("Tracing.start@S1": the page's).
type pausingPage struct {
	tracingErr string

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
		if strings.HasPrefix(req.Method, "Tracing.") {
			call += "@" + req.SessionID
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
			if p.tracingErr != "" {
				c.ReplyError(req, -32000, p.tracingErr)
				return
			}
			c.Reply(req, map[string]any{})
		case "Tracing.end":
			c.Reply(req, map[string]any{})
			p.stream = forcetrace.Trace(forcetrace.Event{Name: "TimeStamp", Pid: 2, Tid: 2, Data: map[string]any{"message": triggerLabel(pageID), "sampleTraceId": 1}})
			c.Event(req.SessionID, "Tracing.tracingComplete", map[string]any{"dataLossOccurred": false, "stream": "stream-1", "traceFormat": "proto"})
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
	var reports []forcetrace.ForceReport
	var mu sync.Mutex
	proxy := forcetrace.NewProxy(t, p.serve(t).Addr(), func(r forcetrace.ForceReport) { mu.Lock(); reports = append(reports, r); mu.Unlock() })
	e := bindWith(t, proxy.Addr(), &fakeDriver{window: pageID})

	assert.NilError(t, e.ForceSample(testContext(t)))
	// One page: no warm-up, and the page's own session traces.
	enable, pause := p.index("Debugger.enable"), p.index("eval debugger")
	start, trigger := p.index("Tracing.start@S1"), p.index("eval console.timeStamp")
	end, resume := p.indexAfter("Tracing.end@S1", trigger), p.index("Debugger.resume")
	assert.Check(t, enable >= 0 && enable < pause && pause < start && start < trigger && trigger < end && end < resume,
		"enable %d, pause %d, start %d, trigger %d, end %d, resume %d", enable, pause, start, trigger, end, resume)
	assert.Check(t, is.Equal(p.count("Tracing.start"), 1), "a warm-up")
	p.mu.Lock()
	assert.Check(t, !p.paused, "the page is left paused")
	assert.Check(t, p.skip, "pauses are not skipped between forces")
	p.mu.Unlock()

	assert.NilError(t, e.ForceSample(testContext(t)))
	assert.Check(t, is.Equal(p.count("Tracing.start"), 2), "the second force warmed up")
	assert.Check(t, is.Equal(p.count("Debugger.enable"), 1), "the second force enabled the debugger again")
	assert.Check(t, is.Equal(p.count("eval debugger"), 2))
	assert.Check(t, is.Equal(p.count("Debugger.disable"), 0))
	deadline := time.Now().Add(prompt)
	for p.count("Debugger.disable") == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	assert.Check(t, is.Equal(p.count("Debugger.disable"), 1), "the debugger stays on")

	// The proxy reports a force once it has read its trace, as the
	// isolates resume.
	for deadline := time.Now().Add(prompt); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(reports)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
	}
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
