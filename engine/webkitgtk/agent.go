package webkitgtk

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wdext/wdext/engine/webkitgtk/wkinspector"
	"github.com/wdext/wdext/polyfill"
)

// drainEvery is how often an agent collects the samples of JavaScriptCore's
// sampling profiler when no profiler stops meanwhile: the profiler keeps
// them until then.
const drainEvery = 10 * time.Second

// maxScripts bounds the responses an agent remembers for workers.
const maxScripts = 256

// maxFrames bounds the frames whose document's policy an agent remembers
// (a page that keeps making iframes): the oldest frame is forgotten first.
const maxFrames = 1024

// maxQueued bounds the events queued for the agent while it is busy
// (arming, delivering samples): a page logging in a loop must not grow
// the queue. Beyond it, events are dropped and counted.
const maxQueued = 4096

// armTimeout bounds arming a page (five inspector commands).
const armTimeout = 10 * time.Second

// agents are the page agents of one browser's inspector, one per page
// connection (see agent).
type agents struct {
	worker string // the script every dedicated worker runs first
	log    *slog.Logger

	mu  sync.Mutex
	all map[*wkinspector.Conn]*agent
}

func newAgents(worker string, log *slog.Logger) *agents {
	return &agents{worker: worker, log: log, all: map[*wkinspector.Conn]*agent{}}
}

// add starts the agent of a page unless it has one; it does not block
// (wkinspector.Browser.OnPrepared).
func (as *agents) add(c *wkinspector.Conn) {
	as.mu.Lock()
	defer as.mu.Unlock()
	for k, a := range as.all {
		select {
		case <-a.done:
			delete(as.all, k)
		default:
		}
	}
	if as.all[c] != nil {
		return
	}
	a := &agent{conn: c, worker: as.worker, log: as.log, wake: make(chan struct{}, 1), ready: make(chan struct{}), done: make(chan struct{}),
		tracking: make(chan float64, 4), complete: make(chan trackingComplete, 4), policies: map[string]policy{}}
	as.all[c] = a
	a.unsubscribe = c.Subscribe(a.event)
	go a.run() // owned by the agent: ends when its connection closes
}

// wait waits until every agent has armed its page once.
func (as *agents) wait(ctx context.Context) error {
	if as == nil {
		return nil
	}
	as.mu.Lock()
	list := make([]*agent, 0, len(as.all))
	for _, a := range as.all {
		list = append(list, a)
	}
	as.mu.Unlock()
	for _, a := range list {
		select {
		case <-a.ready:
		case <-a.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// agent keeps one page of the browser ready for the polyfill, through the
// inspector, on every backend the page has (a navigation may swap
// processes: the new backend starts with every domain disabled):
//
//   - Document-Policy: the Network domain's responseReceived gives each
//     frame's document response headers; when the document's execution
//     context appears (Runtime), the agent tells the polyfill there
//     whether js-profiling is allowed (polyfill.SetPolicyScript), if the
//     context's document is the response's (same URL);
//   - workers: with the Worker domain enabled, a new dedicated worker
//     waits before its script runs until the inspector says
//     Worker.initialized (measured); the agent first evaluates the
//     polyfill in it;
//   - periodic samples: JavaScriptCore's sampling profiler
//     (ScriptProfiler.startTracking with includeSamples) runs all along,
//     on a new backend from before its document loads (PrepareBackends);
//     a profiler's stop() logs polyfill.StopMessage (Console domain), and
//     the agent then collects the samples (stopTracking, which hands them
//     over, and startTracking again at once) and delivers them to every
//     frame (polyfill.DeliverScript). It collects every drainEvery as
//     well, so that the profiler does not hoard them.
type agent struct {
	conn        *wkinspector.Conn
	worker      string
	log         *slog.Logger
	unsubscribe func()

	wake     chan struct{}         // cap 1: events are queued
	ready    chan struct{}         // closed once armed the first time
	done     chan struct{}         // closed when run returns
	tracking chan float64          // ScriptProfiler.trackingStart's timestamps
	complete chan trackingComplete // ScriptProfiler.trackingComplete

	mu      sync.Mutex
	queue   []wkinspector.Event
	dropped int // events not queued: the queue was full

	// Owned by run.
	policies   map[string]policy // by frame id: the latest document response's
	frameOrder []string          // the frames of policies, oldest first
	// scripts are the Document-Policy of the latest other responses, by
	// URL without fragment, for the dedicated workers' scripts; at most
	// maxScripts, the oldest dropped first.
	scripts     map[string]bool
	scriptOrder []string
	since       float64 // the stopwatch time tracking (re)started at; -1: not known
	prepared    bool    // PrepareBackends asked for
}

type policy struct {
	url     string
	allowed bool
}

type trackingComplete struct {
	Timestamp float64 `json:"timestamp"`
	Samples   struct {
		StackTraces []struct {
			Timestamp   float64      `json:"timestamp"`
			StackFrames []stackFrame `json:"stackFrames"`
		} `json:"stackTraces"`
	} `json:"samples"`
}

type stackFrame struct {
	SourceID string `json:"sourceID"`
	Name     string `json:"name"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	URL      string `json:"url"`
}

// event is the connection's subscriber: it runs on the connection's
// reader, so it only queues.
func (a *agent) event(e wkinspector.Event) {
	if e.Worker != "" {
		return
	}
	switch e.Method {
	case "ScriptProfiler.trackingStart", "ScriptProfiler.trackingComplete":
		// A new backend's, prepared before the page moves to it, would
		// be taken for the current one's by a drain meanwhile.
		if e.Target != a.conn.Page() {
			return
		}
	}
	switch e.Method {
	case "ScriptProfiler.trackingStart":
		var p struct{ Timestamp float64 }
		if json.Unmarshal(e.Params, &p) == nil {
			select {
			case a.tracking <- p.Timestamp:
			default:
			}
		}
		return
	case "ScriptProfiler.trackingComplete":
		var p trackingComplete
		if json.Unmarshal(e.Params, &p) == nil {
			select {
			case a.complete <- p:
			default:
			}
		}
		return
	case "Console.messageAdded":
		// Only the polyfill's stop messages: a page's own logging is not
		// queued.
		if stopToken(e.Params) == "" {
			return
		}
	case "Network.responseReceived", "Runtime.executionContextCreated", "Worker.workerCreated", "Target.didCommitProvisionalTarget":
	default:
		return
	}
	a.mu.Lock()
	if len(a.queue) < maxQueued {
		a.queue = append(a.queue, e)
	} else {
		a.dropped++
	}
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

func (a *agent) run() {
	defer close(a.done)
	defer a.unsubscribe()
	a.arm()
	close(a.ready)
	tick := time.NewTicker(drainEvery)
	defer tick.Stop()
	for {
		select {
		case <-a.conn.Done():
			return
		case <-tick.C:
			a.drain(nil)
		case <-a.wake:
			a.mu.Lock()
			events, dropped := a.queue, a.dropped
			a.queue, a.dropped = nil, 0
			a.mu.Unlock()
			if dropped > 0 {
				a.log.Warn("the Profiler polyfill's agent fell behind the page's events and dropped some (a profile may miss periodic samples, a frame its Document-Policy)", "dropped", dropped)
			}
			var tokens []string
			for _, e := range events {
				switch e.Method {
				case "Target.didCommitProvisionalTarget":
					a.arm()
				case "Console.messageAdded":
					if t := stopToken(e.Params); t != "" {
						tokens = append(tokens, t)
					}
				case "Network.responseReceived":
					a.response(e.Params)
				case "Runtime.executionContextCreated":
					a.contextCreated(e.Params)
				case "Worker.workerCreated":
					a.workerCreated(e.Params)
				}
			}
			if len(tokens) > 0 {
				a.drain(tokens)
			}
		}
	}
}

// arm enables, on the page's current backend, what the agent listens to,
// and starts the sampling profiler.
func (a *agent) arm() {
	ctx, cancel := context.WithTimeout(context.Background(), armTimeout)
	defer cancel()
	// Runtime (with Page) for the frames' contexts; the Worker domain
	// through Workers, which keeps the list memory and forcesample use.
	// Each command costs a round trip (see wkinspector): they go out
	// together.
	errs := make([]error, 5)
	var wg sync.WaitGroup
	for i, f := range []func() error{
		func() error {
			// A navigation to a new web process waits for these on the
			// new backend, so that its document's first scripts are
			// sampled (Page.enable starts the stopwatch that samples
			// are timed by; until then they have timestamp 0), and its
			// response's Document-Policy is heard. Asked once: the
			// connection keeps it across backends.
			if a.prepared {
				return nil
			}
			err := a.conn.PrepareBackends(ctx, func(err error) {
				a.log.Warn("preparing a page's new web process for the Profiler polyfill", "err", err)
			}, wkinspector.Command{Method: "Page.enable"}, wkinspector.Command{Method: "Network.enable"},
				wkinspector.Command{Method: "ScriptProfiler.startTracking", Params: map[string]any{"includeSamples": true}})
			a.prepared = err == nil
			return err
		},
		func() error {
			if _, err := a.conn.FrameContexts(ctx); err != nil {
				return err
			}
			_, err := a.conn.Workers(ctx)
			return err
		},
		func() error { return a.conn.Call(ctx, "Console.enable", nil, nil) },
		func() error { return a.conn.Call(ctx, "Network.enable", nil, nil) },
		func() error { return a.startTracking(ctx) },
	} {
		wg.Add(1)
		go func() { // owned by arm, which waits
			defer wg.Done()
			errs[i] = f()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil && !errors.Is(err, wkinspector.ErrClosed) {
		a.log.Warn("arming a page's inspector for the Profiler polyfill", "err", err)
	}
}

// startTracking starts the sampling profiler and notes when.
func (a *agent) startTracking(ctx context.Context) error {
	for len(a.tracking) > 0 {
		<-a.tracking
	}
	if err := a.conn.Call(ctx, "ScriptProfiler.startTracking", map[string]any{"includeSamples": true}, nil); err != nil {
		return err
	}
	// The event comes before the reply, from the same handler. None
	// means tracking was on already: the backend was prepared
	// (PrepareBackends) before its document loaded, when its stopwatch
	// started, so no sample is older than 0.
	select {
	case a.since = <-a.tracking:
	default:
		a.since = 0
	}
	return nil
}

func stopToken(params json.RawMessage) string {
	var p struct {
		Message struct {
			Parameters []struct {
				Type  string `json:"type"`
				Value any    `json:"value"`
			} `json:"parameters"`
		} `json:"message"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.Message.Parameters) != 2 || p.Message.Parameters[0].Value != polyfill.StopMessage {
		return ""
	}
	t, _ := p.Message.Parameters[1].Value.(string)
	return t
}

// response notes the Document-Policy of a frame's new document.
func (a *agent) response(params json.RawMessage) {
	var p struct {
		FrameID  string `json:"frameId"`
		Type     string `json:"type"`
		Response struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"response"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	h := http.Header{}
	for k, v := range p.Response.Headers {
		// WebKit joins repeated fields with ", ", as HTTP allows.
		h.Add(k, v)
	}
	allowed := JSProfilingAllowed(h)
	if p.Type == "Document" && p.FrameID != "" {
		if _, known := a.policies[p.FrameID]; !known {
			a.frameOrder = append(a.frameOrder, p.FrameID)
			if len(a.frameOrder) > maxFrames {
				delete(a.policies, a.frameOrder[0])
				a.frameOrder = a.frameOrder[1:]
			}
		}
		a.policies[p.FrameID] = policy{url: p.Response.URL, allowed: allowed}
		return
	}
	// Perhaps a worker's script: its page fetches it before the worker
	// starts (Worker.workerCreated comes after).
	u := withoutFragment(p.Response.URL)
	if a.scripts == nil {
		a.scripts = map[string]bool{}
	}
	if _, seen := a.scripts[u]; !seen {
		a.scriptOrder = append(a.scriptOrder, u)
		if len(a.scriptOrder) > maxScripts {
			delete(a.scripts, a.scriptOrder[0])
			a.scriptOrder = a.scriptOrder[1:]
		}
	}
	a.scripts[u] = allowed
}

func withoutFragment(u string) string { return strings.SplitN(u, "#", 2)[0] }

// workerPolicy is the Document-Policy a dedicated worker gets, as the
// proposal for Document Policy in workers has it (the JS Self-Profiling
// spec only speaks of documents): a worker fetched over the network has
// its script's response's; a blob: worker its creator's, here the policy
// of a frame of the blob URL's origin (when the frames of that origin
// agree); known is false otherwise (data:, say).
func (a *agent) workerPolicy(url string) (allowed, known bool) {
	if rest, ok := strings.CutPrefix(url, "blob:"); ok {
		origin := rest
		if i := strings.Index(rest, "://"); i >= 0 {
			if j := strings.IndexByte(rest[i+3:], '/'); j >= 0 {
				origin = rest[:i+3+j]
			}
		}
		for _, p := range a.policies {
			if !strings.HasPrefix(p.url, origin+"/") && p.url != origin {
				continue
			}
			if known && p.allowed != allowed {
				return false, false
			}
			allowed, known = p.allowed, true
		}
		return allowed, known
	}
	allowed, known = a.scripts[withoutFragment(url)]
	return allowed, known
}

// contextCreated tells a frame's new document its Document-Policy, when
// the frame's latest response is the document's.
func (a *agent) contextCreated(params json.RawMessage) {
	var p struct {
		Context struct {
			ID      int64  `json:"id"`
			Type    string `json:"type"`
			FrameID string `json:"frameId"`
		} `json:"context"`
	}
	if json.Unmarshal(params, &p) != nil || p.Context.Type != "normal" {
		return
	}
	pol, ok := a.policies[p.Context.FrameID]
	if !ok {
		return
	}
	u, _ := json.Marshal(withoutFragment(pol.url))
	expr := `location.href.split("#")[0] === ` + string(u) + ` && ` + polyfill.SetPolicyScript(pol.allowed)
	ctx, cancel := context.WithTimeout(context.Background(), armTimeout)
	defer cancel()
	a.conn.EvaluateIn(ctx, p.Context.ID, expr, nil) // a context gone meanwhile has no policy to learn
}

// workerCreated puts the polyfill in a new dedicated worker, which waits
// for Worker.initialized before it runs its script.
func (a *agent) workerCreated(params json.RawMessage) {
	var w wkinspector.Worker
	if json.Unmarshal(params, &w) != nil || w.ID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), armTimeout)
	defer cancel()
	if a.worker != "" {
		var r struct {
			WasThrown bool `json:"wasThrown"`
		}
		script := a.worker
		if allowed, known := a.workerPolicy(w.URL); known {
			script += "\n" + polyfill.SetPolicyScript(allowed)
		}
		if err := a.conn.CallWorker(ctx, w.ID, "Runtime.evaluate", map[string]any{"expression": script, "returnByValue": true}, &r); err != nil || r.WasThrown {
			a.log.Warn("putting the Profiler polyfill in a worker", "url", w.URL, "err", err, "thrown", r.WasThrown)
		}
	}
	if err := a.conn.Call(ctx, "Worker.initialized", map[string]any{"workerId": w.ID}, nil); err != nil && !errors.Is(err, wkinspector.ErrClosed) {
		// "Missing worker": it ended first (its page navigated away).
		level := slog.LevelWarn
		if strings.Contains(err.Error(), "Missing worker") {
			level = slog.LevelDebug
		}
		a.log.Log(ctx, level, "letting a worker start", "url", w.URL, "err", err)
	}
}

// drain collects the sampling profiler's samples and delivers them to
// every frame, completing the stops of tokens.
func (a *agent) drain(tokens []string) {
	ctx, cancel := context.WithTimeout(context.Background(), armTimeout)
	defer cancel()
	since := a.since
	for len(a.complete) > 0 {
		<-a.complete
	}
	for len(a.tracking) > 0 {
		<-a.tracking
	}
	// Stop (which hands the samples over), start again and read the
	// page's clock, in one write: the page's main thread handles the
	// three back to back, so hardly any JavaScript runs unsampled
	// between them.
	var batch polyfill.Batch
	var clock struct {
		Result struct {
			Value float64 `json:"value"`
		} `json:"result"`
	}
	err := a.conn.Pipeline(ctx, "",
		wkinspector.Command{Method: "ScriptProfiler.stopTracking"},
		wkinspector.Command{Method: "ScriptProfiler.startTracking", Params: map[string]any{"includeSamples": true}},
		wkinspector.Command{Method: "Runtime.evaluate", Params: map[string]any{"expression": "performance.timeOrigin + performance.now()", "returnByValue": true}, Result: &clock})
	var done trackingComplete
	a.since = -1
	if err == nil {
		// Both events come before the replies (measured).
		for got := 0; got < 2; {
			select {
			case done = <-a.complete:
				got++
			case a.since = <-a.tracking:
				got++
			case <-time.After(time.Second):
				got = 2
			}
		}
		if since >= 0 && a.since >= 0 && len(done.Samples.StackTraces) > 0 {
			// The stopwatch's origin in epoch milliseconds.
			batch = toBatch(done, since, clock.Result.Value-a.since*1000)
		}
	}
	if err != nil && len(tokens) > 0 && !errors.Is(err, wkinspector.ErrClosed) {
		a.log.Warn("collecting the periodic samples", "err", err)
	}
	if len(tokens) == 0 && len(batch.Samples) == 0 {
		return
	}
	contexts, err := a.conn.FrameContexts(ctx)
	if err != nil {
		return
	}
	script := polyfill.DeliverScript(tokens, batch)
	var wg sync.WaitGroup
	for _, id := range contexts {
		wg.Add(1)
		go func() { // owned by drain, which waits
			defer wg.Done()
			a.conn.EvaluateIn(ctx, id, script, nil) // a frame gone meanwhile has no profiler
		}()
	}
	wg.Wait()
}

// toBatch turns JavaScriptCore's samples into the polyfill's: times in
// epoch milliseconds (stopwatch seconds * 1000 + origin), stacks outermost
// first, frames without a script URL left out unless they are named
// host functions (line -1: "now" for performance.now()).
//
// JavaScriptCore gives part of the samples the timestamp 0 (measured on
// WebKitGTK 2.50.6: the earlier ones of a run, 609 of the 707 samples of a
// 1 s loop, 271 of 337 of two 300 ms loops 300 ms apart). Their order is
// right, so they go back to back, at the sampler's period (the median
// gap between the samples with a time), before the time after them (the
// next sample's, or when tracking stopped): the sampler samples only while
// JavaScript runs, so a run of samples is most often one busy stretch.
// When that would put them before the time known before them (the
// previous sample's, or when tracking started), or the period is not
// known, they are spread evenly between the two.
func toBatch(done trackingComplete, since, origin float64) polyfill.Batch {
	traces := done.Samples.StackTraces
	period := samplerPeriod(done)
	times := make([]float64, len(traces))
	prev := since
	for i := 0; i < len(traces); {
		if t := traces[i].Timestamp; t > 0 {
			times[i], prev = t, t
			i++
			continue
		}
		j := i
		for j < len(traces) && traces[j].Timestamp <= 0 {
			j++
		}
		next := done.Timestamp
		if j < len(traces) {
			next = traces[j].Timestamp
		}
		if prev < 0 || prev > next {
			prev = next
		}
		for k := i; k < j; k++ {
			if period > 0 && next-float64(j-i)*period >= prev {
				times[k] = next - float64(j-k)*period
			} else {
				times[k] = prev + (next-prev)*float64(k-i+1)/float64(j-i+1)
			}
		}
		i = j
	}
	var b polyfill.Batch
	index := map[polyfill.Frame]int{}
	for i, st := range traces {
		ids := []int{}
		for k := len(st.StackFrames) - 1; k >= 0; k-- { // innermost first in the protocol
			f := st.StackFrames[k]
			var fr polyfill.Frame
			switch {
			case f.URL != "":
				fr = polyfill.Frame{Name: f.Name, URL: f.URL, Line: max(f.Line, 0), Column: max(f.Column, 0)}
			case f.Line < 0 && f.Name != "":
				fr = polyfill.Frame{Name: f.Name}
			default:
				continue // a script without a URL: the inspector's, the automation's, a builtin's
			}
			id, ok := index[fr]
			if !ok {
				id = len(b.Frames)
				index[fr] = id
				b.Frames = append(b.Frames, fr)
			}
			ids = append(ids, id)
		}
		b.Samples = append(b.Samples, [2]any{origin + times[i]*1000, ids})
	}
	return b
}

// samplerPeriod is the median gap between consecutive samples that have a
// time, leaving out gaps of 50 ms and more (JavaScript did not run); 0
// when there are none.
func samplerPeriod(done trackingComplete) float64 {
	var gaps []float64
	traces := done.Samples.StackTraces
	for i := 1; i < len(traces); i++ {
		a, b := traces[i-1].Timestamp, traces[i].Timestamp
		if a > 0 && b > a && b-a < 0.05 {
			gaps = append(gaps, b-a)
		}
	}
	if len(gaps) == 0 {
		return 0
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}

// JSProfilingAllowed reports whether a response's Document-Policy header
// allows js-profiling: a structured-field dictionary whose js-profiling
// member is a bare key or ?1 (?0 and absent: not allowed; a header that
// does not parse counts as absent, as Document Policy says).
func JSProfilingAllowed(h http.Header) bool {
	allowed := false
	for _, line := range h.Values("Document-Policy") {
		for _, member := range strings.Split(line, ",") {
			// key[=value][;params]
			m := strings.TrimSpace(member)
			key, value, hasValue := m, "", false
			if i := strings.IndexAny(m, "=;"); i >= 0 {
				key = m[:i]
				if m[i] == '=' {
					value, _, _ = strings.Cut(m[i+1:], ";")
					value, hasValue = strings.TrimSpace(value), true
				}
			}
			if strings.TrimSpace(key) != "js-profiling" {
				continue
			}
			switch {
			case !hasValue || value == "?1":
				allowed = true
			case value == "?0":
				allowed = false
			}
		}
	}
	return allowed
}
