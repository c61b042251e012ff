package webkitgtk

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wdext/wdext/engine/webkitgtk/wkinspector"
	"github.com/wdext/wdext/polyfill"
)

// forceExpression forces the sample through the polyfill in one realm.
const forceExpression = "(() => { " + polyfill.ForceSampleScript + " })()"

// ForceSample forces a sample through the Profiler polyfill in every
// frame of every window of a session whose browser serves WebKit's
// remote inspector: in each frame's main world by its execution context,
// all frames of all windows at once. Unlike the WebDriver walk (WebKitGTK)
// it switches no window or frame, so a client command sent meanwhile
// lands where the client is.
func (e *Engine) ForceSample(ctx context.Context) error {
	b := e.inspector
	// The pages known are nudged from the start (see nudgeEvery), while
	// the driver answers GET window/handles too; its error, if any, is
	// the answer, as before.
	pages, err := b.Pages(ctx, false)
	n := startNudging(ctx, pages)
	defer n.stop()
	var handles []string
	if err := e.driver.Do(ctx, "GET", "window/handles", nil, &handles); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	if len(pages) < len(handles) {
		// A window wdext did not open (a target=_blank link, say).
		if pages, err = b.Pages(ctx, true); err != nil {
			return err
		}
		n.set(pages)
	}
	if len(pages) < len(handles) {
		return fmt.Errorf("the inspector shows %d pages for the session's %d windows", len(pages), len(handles))
	}
	var wg sync.WaitGroup
	errs := make([]error, len(pages))
	for i, p := range pages {
		wg.Add(1)
		go func() { // owned here: waited for below
			defer wg.Done()
			errs[i] = forcePage(ctx, p, e.agents != nil)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// forcePage forces the sample in every frame of one page, and, when the
// page's agent put the polyfill in its dedicated workers, in each of
// them. (Without an agent the Worker domain stays off: with it on, a new
// worker waits for the inspector before it runs, and only the agent lets
// it go.)
func forcePage(ctx context.Context, page *wkinspector.Conn, workersToo bool) error {
	contexts, err := page.FrameContexts(ctx)
	if err != nil {
		return err
	}
	var workers []wkinspector.Worker
	if workersToo {
		if workers, err = page.Workers(ctx); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, w := range workers {
		wg.Add(1)
		go func() { // owned here: waited for below
			defer wg.Done()
			var r struct {
				Result struct {
					Value any `json:"value"`
				} `json:"result"`
			}
			err := page.CallWorker(ctx, w.ID, "Runtime.evaluate", map[string]any{"expression": forceExpression, "returnByValue": true}, &r)
			if err != nil && ctx.Err() != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("worker %s: %w", w.URL, err))
				mu.Unlock()
			}
			// Otherwise the worker ended meanwhile: nothing to sample.
		}()
	}
	for frame, id := range contexts {
		wg.Add(1)
		go func() { // owned here: waited for below
			defer wg.Done()
			var n int
			if err := page.EvaluateIn(ctx, id, forceExpression, &n); err != nil && ctx.Err() != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("frame %s: %w", frame, err))
				mu.Unlock()
			}
			// Otherwise the frame went away meanwhile: nothing to sample.
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Nudging. Measured on WebKitGTK 2.50.6 (strace of the browser, ss):
// inspector commands, and the driver's, wait about 40 ms in the browser
// itself, on a loopback socket between its remote inspector server and
// the inspector clients inside the same process: the server writes two
// small messages in a row without TCP_NODELAY, so Nagle holds the second
// until the first is acknowledged, and the receiving end, which has
// nothing to send back, delays that acknowledgement by Linux's 40 ms
// (TCP_QUICKACK on wdext's own socket changed nothing). A force took 44
// ms (median of 1,000), nearly all of it that wait: in its evaluations,
// or, when only those were nudged, in the GET window/handles before
// them. Any message wdext sends through a page's inspector connection is
// relayed over that socket and carries the acknowledgement, so from its
// start to its end a force sends each page a command of no consequence
// every nudgeEvery: the held replies go out at once, and the command
// takes 6 ms (forcesample's BenchmarkForceSampleWebKitGTK, median of
// 1,000; p99 15–18 ms).

// nudgeEvery is how often a force nudges each page while it waits.
const nudgeEvery = time.Millisecond

// maxNudges bounds the nudges of one force: a page whose main thread is
// busy answers nothing until it is free, and the nudges wait in line.
const maxNudges = 60

// nudger nudges a force's pages until stopped.
type nudger struct {
	mu     sync.Mutex
	pages  []*wkinspector.Conn
	cancel context.CancelFunc
	done   chan struct{}
}

// startNudging nudges pages every nudgeEvery until stop.
func startNudging(ctx context.Context, pages []*wkinspector.Conn) *nudger {
	ctx, cancel := context.WithCancel(ctx)
	n := &nudger{pages: pages, cancel: cancel, done: make(chan struct{})}
	go func() { // owned by n: ends at stop, or after maxNudges
		defer close(n.done)
		t := time.NewTicker(nudgeEvery)
		defer t.Stop()
		var wg sync.WaitGroup
		defer wg.Wait()
		for range maxNudges {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			n.mu.Lock()
			pages := n.pages
			n.mu.Unlock()
			for _, p := range pages {
				wg.Add(1)
				go func() { // owned here: its reply, or stop, ends it
					defer wg.Done()
					// A no-op: no object is in that group.
					_ = p.Call(ctx, "Runtime.releaseObjectGroup", map[string]any{"objectGroup": "wdext-nudge"}, nil)
				}()
			}
		}
	}()
	return n
}

// set changes the pages nudged.
func (n *nudger) set(pages []*wkinspector.Conn) {
	n.mu.Lock()
	n.pages = pages
	n.mu.Unlock()
}

// stop ends the nudging, and the nudges still waiting for their replies.
func (n *nudger) stop() {
	n.cancel()
	<-n.done
}
