package chromium

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/runtime"

	"github.com/wdext/wdext/engine/chromium/cdp"
	"github.com/wdext/wdext/wire"
)

// CollectGarbage runs a full garbage collection (HeapProfiler.collectGarbage)
// in every isolate of the top-level browsing context of the window handle:
// the page's, its out-of-process iframes' and its dedicated workers'. The
// isolates are collected concurrently; on timeout the error names those
// whose collection had not finished.
func (e *Engine) CollectGarbage(ctx context.Context) (_ *wire.GCResult, err error) {
	defer func() { err = e.ended(ctx, err) }()
	b, err := e.browser(ctx)
	if err != nil {
		return nil, err
	}
	handle, err := e.currentWindow(ctx)
	if err != nil {
		return nil, err
	}
	return e.collectGarbage(ctx, b, handle)
}

func (e *Engine) collectGarbage(ctx context.Context, b *cdp.Browser, handle string) (*wire.GCResult, error) {
	sc, err := e.collect(ctx, b, handle, true)
	if err != nil {
		return nil, err
	}
	nodes := sc.isolates()
	rows := make([]*wire.GCTarget, len(nodes))
	errs := make([]error, len(nodes))
	stage := make([]string, len(nodes))
	var mu sync.Mutex
	set := func(i int, s string) {
		mu.Lock()
		stage[i] = s
		mu.Unlock()
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() { // owned here: waited for below
			defer wg.Done()
			set(i, "reading its heap usage")
			before, err := cdproto.Call(ctx, n.session, runtime.GetHeapUsage, cdproto.Empty{})
			if err != nil {
				errs[i] = err
				return
			}
			set(i, "collecting garbage")
			if _, err := cdproto.Call(ctx, n.session, heapprofiler.CollectGarbage, cdproto.Empty{}); err != nil {
				errs[i] = err
				return
			}
			set(i, "reading its heap usage after collecting")
			after, err := cdproto.Call(ctx, n.session, runtime.GetHeapUsage, cdproto.Empty{})
			if err != nil {
				errs[i] = err
				return
			}
			set(i, "")
			rows[i] = &wire.GCTarget{Type: n.info.Type, URL: n.info.URL, UsedBefore: uint64(before.UsedSize), UsedAfter: uint64(after.UsedSize)}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		var pending []string
		for i, n := range nodes {
			if rows[i] == nil {
				what := fmt.Sprintf("%s: still %s", n, stage[i])
				if stage[i] == "collecting garbage" {
					what += fmt.Sprintf(" after %.1f s (its thread has not returned to its event loop: busy in a long task, or paused in a debugger)", time.Since(start).Seconds())
				}
				pending = append(pending, what)
			}
		}
		return nil, fmt.Errorf("garbage collection pending in %s", strings.Join(pending, "; "))
	}
	res := &wire.GCResult{Targets: []wire.GCTarget{}}
	var failed []error
	for i, r := range rows {
		switch {
		case r != nil:
			res.Targets = append(res.Targets, *r)
		case nodes[i] == sc.page:
			failed = append(failed, fmt.Errorf("%s: %w", nodes[i], errs[i]))
		}
		// Other targets that failed went away meanwhile: nothing left
		// to collect.
	}
	if len(failed) > 0 {
		return nil, errors.Join(failed...)
	}
	return res, nil
}
