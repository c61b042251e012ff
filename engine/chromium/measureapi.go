package chromium

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/runtime"

	"github.com/wdext/wdext/engine/chromium/cdp"
	"github.com/wdext/wdext/wire"
)

// groups names each measurement's remote objects apart, so that one
// call's cleanup never releases another's promise.
var groups atomic.Int64

// Rounds of forced garbage collection start this often at first, then
// less often, up to maxRoundGap. The request reaches the renderer through
// the browser process, after the call returns: a round at once is always
// too early on Chromium 156, and the one 5 ms later settles it (measured:
// 13–23 ms from the call to the result).
const (
	firstRoundGap = 5 * time.Millisecond
	maxRoundGap   = 500 * time.Millisecond
)

// measureAPI runs performance.measureUserAgentSpecificMemory() in the page
// and forces the garbage collections it waits for.
//
// Chromium answers the call only when every isolate it measures (the
// page's, and those of the dedicated workers in its process) has run a
// full GC since the request, and leaves V8 to schedule that GC 10–20 s
// later. HeapProfiler.collectGarbage in every isolate makes it now. The
// request reaches the isolates asynchronously, so a first GC may come too
// early: rounds repeat, re-listing the targets each time
// (a worker may have started), until the promise settles or ctx ends. A GC
// still running is never requested again; on timeout the error names what
// was still pending.
//
// The alternative, Chromium's --enable-blink-features=ForceEagerMeasureMemory
// at session creation, settles about as fast (the page's own call: 21 ms
// median, BenchmarkMeasureMemoryEagerFlag) but needs a browser switch that
// wdext can only add to sessions it starts, not to a remote upstream's or
// an already running browser, and it is no more robust: both wait for a
// worker whose thread is busy (measured: a worker in a 20 s loop held the
// eager measurement for 19.9 s), since V8 runs the forced GC, like the
// eager measurement, as a task of that thread. Forcing GCs also works when
// the flag is set.
func (e *Engine) measureAPI(ctx context.Context, b *cdp.Browser, handle string, sc *scene) (wire.MemoryMeasurement, error) {
	group := fmt.Sprintf("wdext-memory-%d", groups.Add(1))
	ps := sc.page.session
	ev, err := cdproto.Call(ctx, ps, runtime.Evaluate, runtime.EvaluateParams{
		Expression:  "performance.measureUserAgentSpecificMemory()",
		ObjectGroup: group,
	})
	if err != nil {
		return wire.MemoryMeasurement{}, fmt.Errorf("calling performance.measureUserAgentSpecificMemory(): %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		cdproto.Call(cctx, ps, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: group})
	}()
	if ev.ExceptionDetails != nil {
		return wire.MemoryMeasurement{}, wire.Errorf(wire.JavascriptError, "performance.measureUserAgentSpecificMemory() threw: %s", exceptionText(ev.ExceptionDetails))
	}

	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		stop()
		wg.Wait()
	}()
	type settled struct {
		res *runtime.AwaitPromiseResult
		err error
	}
	done := make(chan settled, 1)
	wg.Add(1)
	go func() { // owned by measureAPI: stopped and waited for on return
		defer wg.Done()
		byValue := true
		res, err := cdproto.Call(wctx, ps, runtime.AwaitPromise, runtime.AwaitPromiseParams{PromiseObjectID: ev.Result.ObjectID, ReturnByValue: &byValue})
		done <- settled{&res, err}
	}()

	f := &forcer{state: map[string]*gcState{}}
	gap := firstRoundGap
	for round := 1; ; round++ {
		if round > 1 {
			// A worker may have started since: look again. A failed
			// look keeps the last scene. No probe: the page's thread
			// may be collecting garbage right now, as asked.
			if s, err := e.collect(ctx, b, handle, false); err == nil {
				sc = s
			}
		}
		f.start(wctx, &wg, sc.isolates())
		timer := time.NewTimer(gap)
		select {
		case s := <-done:
			timer.Stop()
			if s.err != nil {
				if ctx.Err() != nil {
					return wire.MemoryMeasurement{}, fmt.Errorf("performance.measureUserAgentSpecificMemory() had not settled: %s", f.report(round))
				}
				return wire.MemoryMeasurement{}, fmt.Errorf("waiting for performance.measureUserAgentSpecificMemory() (did the page navigate?): %w", s.err)
			}
			if s.res.ExceptionDetails != nil {
				return wire.MemoryMeasurement{}, wire.Errorf(wire.JavascriptError, "performance.measureUserAgentSpecificMemory() rejected: %s", exceptionText(s.res.ExceptionDetails))
			}
			return decodeMeasurement(s.res.Result.Value)
		case <-ctx.Done():
			timer.Stop()
			return wire.MemoryMeasurement{}, fmt.Errorf("performance.measureUserAgentSpecificMemory() had not settled: %s", f.report(round))
		case <-timer.C:
		}
		gap = min(2*gap, maxRoundGap)
	}
}

// forcer keeps one forced GC at a time per isolate and remembers how each
// went, for the timeout message.
type forcer struct {
	mu    sync.Mutex
	state map[string]*gcState // by isolate
	order []string
}

type gcState struct {
	who      string
	inflight bool
	since    time.Time
	done     int
	err      error
}

func (f *forcer) start(ctx context.Context, wg *sync.WaitGroup, nodes []*node) {
	for _, n := range nodes {
		f.mu.Lock()
		st := f.state[n.isolate]
		if st == nil {
			st = &gcState{}
			f.state[n.isolate] = st
			f.order = append(f.order, n.isolate)
		}
		if st.inflight {
			f.mu.Unlock()
			continue
		}
		st.who, st.inflight, st.since = n.String(), true, time.Now()
		f.mu.Unlock()
		wg.Add(1)
		go func() { // owned by measureAPI's WaitGroup
			defer wg.Done()
			_, err := cdproto.Call(ctx, n.session, heapprofiler.CollectGarbage, cdproto.Empty{})
			if ctx.Err() != nil {
				return // cut short: it was still pending
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			st.inflight = false
			if err != nil {
				st.err = err
			} else {
				st.done++
			}
		}()
	}
}

// report says what the measurement was still waiting for.
func (f *forcer) report(rounds int) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var pending, failed, completed []string
	for _, iso := range f.order {
		st := f.state[iso]
		switch {
		case st.inflight && st.done == 0:
			pending = append(pending, fmt.Sprintf("a garbage collection in %s, requested %.1f s ago and not started: its thread has not returned to its event loop (busy in a long task, or paused in a debugger)",
				st.who, time.Since(st.since).Seconds()))
		case st.done == 0 && st.err != nil:
			failed = append(failed, fmt.Sprintf("%s (%v)", st.who, st.err))
		default:
			// One collection since the request is what the measurement
			// needs of an isolate; a later one still running is not
			// what it waits for.
			completed = append(completed, fmt.Sprintf("%s (%d)", st.who, st.done))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Chromium answers once every isolate of the page's process has run a full garbage collection since the request; wdext forced %d round(s). ", rounds)
	if len(pending) > 0 {
		fmt.Fprintf(&b, "Still pending: %s. ", strings.Join(pending, "; "))
	} else {
		b.WriteString("Every isolate has completed a forced garbage collection, yet the promise has not settled. ")
	}
	if len(failed) > 0 {
		fmt.Fprintf(&b, "Failed: %s. ", strings.Join(failed, "; "))
	}
	if len(completed) > 0 {
		fmt.Fprintf(&b, "Completed (collections): %s.", strings.Join(completed, "; "))
	}
	return strings.TrimSpace(b.String())
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return d.Text
}

// decodeMeasurement reads the value measureUserAgentSpecificMemory()
// resolved to.
func decodeMeasurement(raw []byte) (wire.MemoryMeasurement, error) {
	var m wire.MemoryMeasurement
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("decoding the measurement the page returned: %w", err)
	}
	return m, nil
}
