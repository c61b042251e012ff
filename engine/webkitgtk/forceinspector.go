package webkitgtk

import (
	"context"
	"errors"
	"fmt"
	"sync"

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
	pages, err := b.Pages(ctx, false) // the driver's error, if any, comes first
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
