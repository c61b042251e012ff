package wkinspector

import (
	"context"
	"encoding/json"
	"sync"
)

// Worker is a dedicated worker of a page (Worker.workerCreated).
type Worker struct {
	ID  string `json:"workerId"`
	URL string `json:"url"`
}

// Workers returns the page's dedicated workers, which Worker.enable
// announces before it replies. The domain stays enabled, as CallWorker
// needs.
func (c *Conn) Workers(ctx context.Context) ([]Worker, error) {
	var mu sync.Mutex
	var workers []Worker
	stop := c.Subscribe(func(e Event) {
		if e.Worker != "" || e.Method != "Worker.workerCreated" {
			return
		}
		var w Worker
		if json.Unmarshal(e.Params, &w) == nil {
			mu.Lock()
			workers = append(workers, w)
			mu.Unlock()
		}
	})
	defer stop()
	c.Call(ctx, "Worker.disable", nil, nil) // so that enable announces them all
	if err := c.Call(ctx, "Worker.enable", nil, nil); err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	return workers, nil
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
