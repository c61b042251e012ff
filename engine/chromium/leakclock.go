package chromium

import (
	"context"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/heapprofiler"
)

// ticks watches the updates in which DevTools gives new objects their
// heap object ids while V8's allocation tracker runs (about every 50 ms,
// HeapProfiler.lastSeenObjectId): objects made before an update have
// ids up to its lastSeenObjectId, those made after, higher ones. The
// leak check's growth rule reads them as a clock (leaks.Input.Clock).
type ticks struct {
	mu      sync.Mutex
	seen    []tick
	arrived chan struct{} // closed and replaced at each update
	stop    func()
	done    chan struct{}
}

type tick struct {
	at   time.Time // when wdext received it
	last uint32
}

// watchTicks starts watching ts's updates; stop ends it.
func watchTicks(ts *targetSession) *ticks {
	ch, unsubscribe := ts.s.Subscribe(heapprofiler.LastSeenObjectID.Method)
	w := &ticks{arrived: make(chan struct{}), stop: unsubscribe, done: make(chan struct{})}
	go func() { // owned here: ends when stop closes ch
		defer close(w.done)
		for raw := range ch {
			var ev heapprofiler.EventLastSeenObjectID
			if jsonv2.Unmarshal(raw, &ev) != nil {
				continue
			}
			w.mu.Lock()
			if len(w.seen) == maxTicks { // a check left running for hours
				w.seen = append(w.seen[:0], w.seen[maxTicks/2:]...)
			}
			w.seen = append(w.seen, tick{time.Now(), uint32(ev.LastSeenObjectID)})
			close(w.arrived)
			w.arrived = make(chan struct{})
			w.mu.Unlock()
		}
	}()
	return w
}

// close stops watching.
func (w *ticks) close() {
	w.stop()
	<-w.done
}

// clock is the lastSeenObjectId of the first update after stopped, above
// the ids of every object made by then; 0 when the updates between began
// and stopped were fewer than two an iteration (too few to tell the
// iterations apart) or none came within clockWait.
func (w *ticks) clock(ctx context.Context, began, stopped time.Time, iterations int) uint32 {
	w.mu.Lock()
	n := 0
	for _, t := range w.seen {
		if t.at.After(began) && t.at.Before(stopped) {
			n++
		}
	}
	w.mu.Unlock()
	if n < 2*iterations {
		return 0
	}
	return w.after(ctx, stopped, 1, clockWait)
}

// mark is the lastSeenObjectId of the second update received after at,
// waiting for it: every object made before at has an id up to it, and
// every object made once it returns a higher one (the first update to
// arrive may have been sent before at). 0 when it did not come within
// markWait (a busy page).
func (w *ticks) mark(ctx context.Context, at time.Time) uint32 {
	return w.after(ctx, at, 2, markWait)
}

// after is the lastSeenObjectId of the nth update received after at, or
// 0 when it did not come within wait.
func (w *ticks) after(ctx context.Context, at time.Time, n int, wait time.Duration) uint32 {
	timeout := time.After(wait)
	for {
		w.mu.Lock()
		arrived := w.arrived
		seen := 0
		for _, t := range w.seen {
			if t.at.After(at) {
				if seen++; seen == n {
					w.mu.Unlock()
					return t.last
				}
			}
		}
		w.mu.Unlock()
		select {
		case <-arrived:
		case <-timeout:
			return 0
		case <-ctx.Done():
			return 0
		}
	}
}

// maxTicks bounds the updates kept: 20 a second, about 3 hours.
const maxTicks = 1 << 18

// clockWait bounds the wait for an update after the stop.
const clockWait = 500 * time.Millisecond

// markWait bounds the wait for a mark's update. Measured beside two CPU
// hogs and other browsers' tests: 1 mark in 24 waited more than 500 ms.
const markWait = 5 * time.Second
