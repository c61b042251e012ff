package chromium

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/tracing"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/chromium/cdp"
	"github.com/wdext/wdext/internal/turn"
	"github.com/wdext/wdext/wire"
)

// gcCategories are the tracing categories the GC log records: V8's GC
// scopes (with their epoch) and its per-GC summary, V8.GCTraceGCNVP.
var gcCategories = []string{"disabled-by-default-v8.gc"}

// gcLog is a session's GC log: a browser-wide tracing session and the
// entries read from it.
type gcLog struct {
	turn       turn.Turn // one gc-log command at a time, through its CDP calls
	collecting bool
	b          *cdp.Browser
	unlock     func() // the browser's tracing, held while collecting
	parser     gcParser
	entries    []wire.GCEntry
	dataLoss   bool
	stopped    string
}

func (g *gcLog) reply() wire.GCLog {
	out := wire.GCLog{Collecting: g.collecting, Entries: g.entries, DataLossOccurred: g.dataLoss, Stopped: g.stopped}
	if out.Entries == nil {
		out.Entries = []wire.GCEntry{}
	}
	return out
}

// CollectGCs starts or stops the GC log: browser-wide tracing of V8's GC
// categories, which it holds (forcesample cannot arm meanwhile).
func (e *Engine) CollectGCs(ctx context.Context, collect bool) (_ bool, err error) {
	defer func() { err = e.ended(ctx, err) }()
	g := &e.gc
	if err := g.turn.Take(ctx); err != nil {
		return false, err
	}
	defer g.turn.Give()
	g.checkConnection()
	switch {
	case collect && !g.collecting:
		b, err := e.browser(ctx)
		if err != nil {
			return false, err
		}
		unlock, err := startTracing(ctx, b)
		if err != nil {
			return false, err
		}
		g.collecting, g.b, g.unlock, g.stopped = true, b, unlock, ""
	case !collect && g.collecting:
		g.collecting = false
		defer g.stop()
		if err := g.flush(ctx, false); err != nil {
			return false, err
		}
	}
	return g.collecting, nil
}

// GCs returns the collections logged since the last call.
func (e *Engine) GCs(ctx context.Context) (_ wire.GCLog, err error) {
	defer func() { err = e.ended(ctx, err) }()
	g := &e.gc
	if err := g.turn.Take(ctx); err != nil {
		return wire.GCLog{}, err
	}
	defer g.turn.Give()
	g.checkConnection()
	if g.collecting {
		// The browser hands trace events out only when tracing ends: end
		// it and start again at once.
		if err := g.flush(ctx, true); err != nil {
			return wire.GCLog{}, err
		}
	}
	out := g.reply()
	g.entries, g.dataLoss, g.stopped = nil, false, ""
	return out, nil
}

// checkConnection notices a tracing session that ended with its CDP
// connection (the browser stops tracing when its client goes away).
func (g *gcLog) checkConnection() {
	if !g.collecting {
		return
	}
	select {
	case <-g.b.Done():
		g.stop()
		g.dataLoss = true
		g.stopped = "the CDP connection that held the tracing session closed"
	default:
	}
}

// startTracing takes the browser's tracing for the GC log (waiting, a few
// seconds at most, for a forcesample to finish with it) and starts
// browser-wide tracing of the GC categories.
func startTracing(ctx context.Context, b *cdp.Browser) (unlock func(), err error) {
	wait, cancel := context.WithTimeout(ctx, 6*time.Second)
	defer cancel()
	unlock, err = b.LockTracing(wait, "the GC log", true)
	if err != nil {
		return nil, wire.Errorf(wire.UnsupportedOperation, "the GC log needs the browser's tracing, but it is busy: %v", err)
	}
	if err := startTrace(ctx, b); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// startTrace starts the tracing session itself.
func startTrace(ctx context.Context, b *cdp.Browser) error {
	_, err := cdproto.Call(ctx, b, tracing.Start, tracing.StartParams{
		TransferMode: tracing.StartTransferModeReportEvents,
		TraceConfig: &tracing.TraceConfig{
			RecordMode:          tracing.TraceConfigRecordModeRecordContinuously,
			TraceBufferSizeInKb: 32 << 10,
			IncludedCategories:  gcCategories,
			ExcludedCategories:  []string{"*"},
		},
	})
	if cdp.IsTracingStarted(err) {
		return tracingRefused("the GC log", err)
	}
	if err != nil {
		return engine.Failed("starting tracing", err)
	}
	return nil
}

// stop marks the log stopped, and lets go of the browser's tracing.
func (g *gcLog) stop() {
	g.collecting = false
	if g.unlock != nil {
		g.unlock()
		g.unlock = nil
	}
}

// flush ends the tracing session, parses what it recorded into entries,
// and, if restart, starts a new one. Collections between the end and the
// new start (tens of milliseconds) are not logged.
func (g *gcLog) flush(ctx context.Context, restart bool) error {
	b := g.b
	data, stopData := b.Subscribe(tracing.DataCollected.Method)
	defer stopData()
	complete, stopComplete := b.Subscribe(tracing.TracingComplete.Method)
	defer stopComplete()
	if _, err := cdproto.Call(ctx, b, tracing.End, cdproto.Empty{}); err != nil {
		g.stop()
		g.dataLoss = true
		g.stopped = "ending tracing failed: " + err.Error()
		return nil
	}
	take := func(raw jsonv2.Value) {
		var ev tracing.EventDataCollected
		if jsonv2.Unmarshal(raw, &ev) != nil {
			g.dataLoss = true
			return
		}
		for _, e := range ev.Value {
			g.parser.add(e)
		}
	}
	timeout := time.After(30 * time.Second)
wait:
	for {
		select {
		case raw, ok := <-data:
			if ok {
				take(raw)
			}
		case raw, ok := <-complete:
			var c tracing.EventTracingComplete
			if ok && jsonv2.Unmarshal(raw, &c) == nil {
				g.dataLoss = g.dataLoss || c.DataLossOccurred
			}
			break wait
		case <-b.Done():
			g.dataLoss = true
			break wait
		case <-ctx.Done():
			g.dataLoss = true
			break wait
		case <-timeout:
			g.dataLoss = true
			break wait
		}
	}
	// Every dataCollected precedes tracingComplete: the rest is buffered.
	for drained := false; !drained; {
		select {
		case raw, ok := <-data:
			if ok {
				take(raw)
			} else {
				drained = true
			}
		default:
			drained = true
		}
	}
	g.entries = append(g.entries, g.parser.finish()...)
	if restart {
		if err := startTrace(ctx, b); err != nil {
			g.stop()
			g.stopped = "restarting tracing failed: " + wire.AsError(err).Message
		}
	}
	return nil
}

// traceEvent is the part of a Chromium trace event the GC log reads.
type traceEvent struct {
	Name string          `json:"name"`
	Ph   string          `json:"ph"`
	Pid  int64           `json:"pid"`
	Tid  int64           `json:"tid"`
	Ts   float64         `json:"ts"`
	Dur  *float64        `json:"dur"`
	Args json.RawMessage `json:"args"`
}

// V8's top-level GC scopes on the isolate's thread, each with the cycle's
// epoch: the final pauses, by collector, and the incremental steps.
var (
	finalPauses = map[string]string{
		"V8.GC_SCAVENGER":          "scavenger",
		"V8.GC_MINOR_MARK_SWEEPER": "minor-mark-sweeper",
		"V8.GC_MARK_COMPACTOR":     "mark-compactor",
	}
	incrementalSteps = map[string]bool{
		"V8.GC_MC_INCREMENTAL_START":       true,
		"V8.GC_MC_INCREMENTAL":             true,
		"V8.GC_MC_INCREMENTAL_FINALIZE":    true,
		"V8.GC_MINOR_MS_INCREMENTAL_START": true,
	}
)

type threadKey struct{ pid, tid int64 }

type cycleKey struct {
	threadKey
	epoch int64
}

type cycle struct {
	key    cycleKey
	slices []wire.GCSlice
	final  *wire.GCSlice
	kind   string
	nvp    *nvp
}

// nvp is V8.GCTraceGCNVP's summary of a GC.
type nvp struct {
	GC              string `json:"gc"`
	Reason          string `json:"reason"`
	CollectorReason string `json:"collector_reason"`
	IsIncremental   *bool  `json:"is_incremental"`
	StartObjectSize *int64 `json:"start_object_size"`
	EndObjectSize   *int64 `json:"end_object_size"`
}

// gcParser turns trace events into entries. It keeps, between flushes,
// the names of processes and threads and the cycles that had started but
// not finished.
type gcParser struct {
	events    []traceEvent
	processes map[int64]string
	threads   map[threadKey]string
	pending   map[cycleKey]*cycle
}

// add takes one raw trace event, keeping only the ones the log reads.
func (p *gcParser) add(raw jsonv2.Value) {
	// Cheap filter before decoding: most events are sub-scopes.
	s := string(raw)
	if !strings.Contains(s, `"V8.GC_SCAVENGER"`) && !strings.Contains(s, `"V8.GC_MARK_COMPACTOR"`) &&
		!strings.Contains(s, `"V8.GC_MINOR_M`) && !strings.Contains(s, `INCREMENTAL`) &&
		!strings.Contains(s, `"V8.GCTraceGCNVP"`) && !strings.Contains(s, `_name"`) {
		return
	}
	var e traceEvent
	if json.Unmarshal(raw, &e) != nil {
		return
	}
	p.addEvent(e)
}

func (p *gcParser) addEvent(e traceEvent) {
	if p.processes == nil {
		p.processes = map[int64]string{}
		p.threads = map[threadKey]string{}
		p.pending = map[cycleKey]*cycle{}
	}
	switch {
	case e.Ph == "M" && (e.Name == "process_name" || e.Name == "thread_name"):
		var a struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(e.Args, &a) == nil {
			if e.Name == "process_name" {
				p.processes[e.Pid] = a.Name
			} else {
				p.threads[threadKey{e.Pid, e.Tid}] = a.Name
			}
		}
	case e.Name == "V8.GCTraceGCNVP",
		e.Ph == "X" && e.Dur != nil && (finalPauses[e.Name] != "" || incrementalSteps[e.Name]):
		p.events = append(p.events, e)
	}
}

// finish matches the events read so far into cycles and returns the
// finished ones, oldest first.
func (p *gcParser) finish() []wire.GCEntry {
	events := p.events
	p.events = nil
	slices.SortStableFunc(events, func(a, b traceEvent) int { return cmp.Compare(a.Ts, b.Ts) })
	// The cycle on each thread that ended last and still awaits its
	// summary, which V8 writes right after the final pause.
	awaiting := map[threadKey]*cycle{}
	var done []*cycle
	for _, e := range events {
		th := threadKey{e.Pid, e.Tid}
		if e.Name == "V8.GCTraceGCNVP" {
			c := awaiting[th]
			if c == nil {
				continue
			}
			var a struct {
				Value string `json:"value"`
			}
			var n nvp
			if json.Unmarshal(e.Args, &a) == nil && json.Unmarshal([]byte(a.Value), &n) == nil {
				c.nvp = &n
			}
			delete(awaiting, th)
			continue
		}
		var a struct {
			Epoch *int64 `json:"epoch"`
		}
		if json.Unmarshal(e.Args, &a) != nil || a.Epoch == nil {
			continue
		}
		k := cycleKey{th, *a.Epoch}
		c := p.pending[k]
		if c == nil {
			c = &cycle{key: k}
			p.pending[k] = c
		}
		sl := wire.GCSlice{StartTimestamp: e.Ts / 1000, EndTimestamp: (e.Ts + *e.Dur) / 1000}
		if kind := finalPauses[e.Name]; kind != "" {
			c.kind, c.final = kind, &sl
			delete(p.pending, k)
			done = append(done, c)
			awaiting[th] = c
		} else {
			c.slices = append(c.slices, sl)
		}
	}
	// A cycle whose isolate went away never finishes: forget it after a
	// minute without news.
	if n := len(events); n > 0 {
		horizon := events[n-1].Ts/1000 - 60_000
		for k, c := range p.pending {
			if len(c.slices) == 0 || c.slices[len(c.slices)-1].EndTimestamp < horizon {
				delete(p.pending, k)
			}
		}
	}
	out := make([]wire.GCEntry, 0, len(done))
	for _, c := range done {
		out = append(out, p.entry(c))
	}
	return out
}

func (p *gcParser) entry(c *cycle) wire.GCEntry {
	e := wire.GCEntry{
		Collections:   append(c.slices, *c.final),
		GCCycleNumber: c.key.epoch,
		Collector:     c.kind,
		Pid:           c.key.pid,
		Tid:           c.key.tid,
		Process:       p.processes[c.key.pid],
		Thread:        p.threads[c.key.threadKey],
	}
	if n := c.nvp; n != nil {
		e.Reason = &n.Reason
		e.HeapBytesBefore, e.HeapBytesAfter = n.StartObjectSize, n.EndObjectSize
		incremental := len(c.slices) > 0
		if n.IsIncremental != nil {
			incremental = *n.IsIncremental
		}
		if c.kind == "mark-compactor" && !incremental {
			r := cmp.Or(n.CollectorReason, n.Reason)
			e.NonincrementalReason = &r
		}
	}
	return e
}
