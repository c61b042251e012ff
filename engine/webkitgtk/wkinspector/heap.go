package wkinspector

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Worker is a dedicated worker of a page (Worker.workerCreated).
type Worker struct {
	ID  string `json:"workerId"`
	URL string `json:"url"`
}

// Workers returns the page's dedicated workers. The first call enables
// the Worker domain, which announces the workers there are before it
// replies; from then on the connection keeps the list from the domain's
// events (workerCreated, workerTerminated), so later calls cost no round
// trip. The domain stays enabled, as CallWorker needs; while it is, WebKit
// holds every new worker before its script until Worker.initialized is
// sent for it (see the package documentation).
func (c *Conn) Workers(ctx context.Context) ([]Worker, error) {
	c.mu.Lock()
	tracking := c.workers != nil
	if !tracking {
		c.workers = map[string]Worker{}
	}
	c.mu.Unlock()
	if !tracking {
		if err := c.Call(ctx, "Worker.enable", nil, nil); err != nil {
			c.mu.Lock()
			c.workers = nil
			c.mu.Unlock()
			return nil, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Collect(maps.Values(c.workers))
	slices.SortFunc(out, func(a, b Worker) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// callVM sends a command to the page (worker "") or to one of its
// workers.
func (c *Conn) callVM(ctx context.Context, worker, method string, params, result any) error {
	if worker == "" {
		return c.Call(ctx, method, params, result)
	}
	return c.CallWorker(ctx, worker, method, params, result)
}

// HeapSnapshot returns a JavaScriptCore heap snapshot (JSON, package
// jscsnapshot reads it) of the page's VM (worker "") or a worker's. The
// VM collects garbage first.
func (c *Conn) HeapSnapshot(ctx context.Context, worker string) (string, error) {
	var r struct {
		SnapshotData string `json:"snapshotData"`
	}
	err := c.callVM(ctx, worker, "Heap.snapshot", nil, &r)
	return r.SnapshotData, err
}

// CollectGarbage runs a full collection in the page's VM (worker "") or
// a worker's.
func (c *Conn) CollectGarbage(ctx context.Context, worker string) error {
	return c.callVM(ctx, worker, "Heap.gc", nil, nil)
}

// EnablePage enables the Page domain, which stays enabled: the bootstrap
// script and the frames' execution contexts need it. Enabling it twice is
// an error in WebKit; here it is not (a backend PrepareBackends enabled it
// on answers so).
func (c *Conn) EnablePage(ctx context.Context) error {
	c.mu.Lock()
	on := c.pageOn
	c.mu.Unlock()
	if on {
		return nil
	}
	var ierr *Error
	if err := c.Call(ctx, "Page.enable", nil, nil); err != nil && !(errors.As(err, &ierr) && ierr.Message == "Page domain already enabled") {
		return err
	}
	c.mu.Lock()
	c.pageOn = true
	c.mu.Unlock()
	return nil
}

// FrameContexts maps the page's frame ids to the ids of their documents'
// main-world execution contexts. The first call enables the Runtime
// domain (with Page, which names the frames), which announces the
// contexts there are before it replies; from then on the connection keeps
// the map up to date from the domains' events, so later calls cost no
// round trip.
func (c *Conn) FrameContexts(ctx context.Context) (map[string]int64, error) {
	c.mu.Lock()
	tracking := c.contexts != nil
	c.mu.Unlock()
	if !tracking {
		if err := c.EnablePage(ctx); err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.contexts = map[string]int64{}
		c.mu.Unlock()
		if err := c.Call(ctx, "Runtime.enable", nil, nil); err != nil {
			c.mu.Lock()
			c.contexts = nil
			c.mu.Unlock()
			return nil, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.contexts), nil
}

// EvaluateIn runs expression in an execution context and decodes its
// value into v.
func (c *Conn) EvaluateIn(ctx context.Context, contextID int64, expression string, v any) error {
	return c.evaluate(ctx, map[string]any{"expression": expression, "contextId": contextID, "returnByValue": true}, v)
}

// Evaluate runs expression in the page's main frame and decodes its value
// into v.
func (c *Conn) Evaluate(ctx context.Context, expression string, v any) error {
	return c.evaluate(ctx, map[string]any{"expression": expression, "returnByValue": true}, v)
}

func (c *Conn) evaluate(ctx context.Context, params map[string]any, v any) error {
	var r struct {
		Result struct {
			Value       any    `json:"value"`
			Description string `json:"description"`
		} `json:"result"`
		WasThrown bool `json:"wasThrown"`
	}
	if err := c.Call(ctx, "Runtime.evaluate", params, &r); err != nil {
		return err
	}
	if r.WasThrown {
		return fmt.Errorf("evaluating %q threw %s", params["expression"], r.Result.Description)
	}
	return remarshal(r.Result.Value, v)
}
