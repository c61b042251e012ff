package webkitgtk

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
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
