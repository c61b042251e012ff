package wdclient

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/tebeka/selenium"
	"github.com/wdext/wdext/wire"
)

// The Debugger.Memory-style commands (package memory/debuggermemory). Each
// has a function taking the tebeka session and a Client method taking a
// context and a session id.

func forSession(wd selenium.WebDriver) (*Client, string, error) {
	c, err := For(wd)
	if err != nil {
		return nil, "", err
	}
	return c, wd.SessionID(), nil
}

// TakeCensus takes a census of the current page's heap, grouped by
// breakdown (nil for takeCensus's default; a Go value or a
// json.RawMessage), and decodes it into out.
func TakeCensus(wd selenium.WebDriver, breakdown, out any) error {
	c, id, err := forSession(wd)
	if err != nil {
		return err
	}
	return c.TakeCensus(context.Background(), id, breakdown, "page", out)
}

// TakeCensus sends POST /session/{id}/wdext/memory/census. targets is
// "page" or "all" ("" is "page"); with "all", out receives a
// wire.AllCensus.
func (c *Client) TakeCensus(ctx context.Context, sessionID string, breakdown any, targets string, out any) error {
	args := wire.CensusArgs{Targets: targets}
	if breakdown != nil {
		raw, err := json.Marshal(breakdown)
		if err != nil {
			return err
		}
		args.Breakdown = raw
	}
	return c.Do(ctx, http.MethodPost, "/session/"+sessionID+"/wdext/memory/census", args, out)
}

// SetAllocations sets the allocation log's options (nil fields keep their
// value) and returns them all.
func SetAllocations(wd selenium.WebDriver, args wire.AllocationArgs) (wire.AllocationSettings, error) {
	c, id, err := forSession(wd)
	if err != nil {
		return wire.AllocationSettings{}, err
	}
	return c.SetAllocations(context.Background(), id, args)
}

// SetAllocations sends POST /session/{id}/wdext/memory/allocations.
func (c *Client) SetAllocations(ctx context.Context, sessionID string, args wire.AllocationArgs) (wire.AllocationSettings, error) {
	var out wire.AllocationSettings
	err := c.Do(ctx, http.MethodPost, "/session/"+sessionID+"/wdext/memory/allocations", args, &out)
	return out, err
}

// DrainAllocations returns and clears the allocation log
// (drainAllocationsLog).
func DrainAllocations(wd selenium.WebDriver) (wire.AllocationsLog, error) {
	c, id, err := forSession(wd)
	if err != nil {
		return wire.AllocationsLog{}, err
	}
	return c.DrainAllocations(context.Background(), id)
}

// DrainAllocations sends POST /session/{id}/wdext/memory/allocations/drain.
func (c *Client) DrainAllocations(ctx context.Context, sessionID string) (wire.AllocationsLog, error) {
	var out wire.AllocationsLog
	err := c.Do(ctx, http.MethodPost, "/session/"+sessionID+"/wdext/memory/allocations/drain", struct{}{}, &out)
	return out, err
}

// CollectGCLog starts (true) or stops (false) collecting garbage
// collections.
func CollectGCLog(wd selenium.WebDriver, collect bool) (wire.GCLogState, error) {
	c, id, err := forSession(wd)
	if err != nil {
		return wire.GCLogState{}, err
	}
	return c.CollectGCLog(context.Background(), id, collect)
}

// CollectGCLog sends POST /session/{id}/wdext/memory/gc-log.
func (c *Client) CollectGCLog(ctx context.Context, sessionID string, collect bool) (wire.GCLogState, error) {
	var out wire.GCLogState
	err := c.Do(ctx, http.MethodPost, "/session/"+sessionID+"/wdext/memory/gc-log", wire.GCLogArgs{Collect: &collect}, &out)
	return out, err
}

// GCLogEntries returns the collections logged since the last call.
func GCLogEntries(wd selenium.WebDriver) (wire.GCLog, error) {
	c, id, err := forSession(wd)
	if err != nil {
		return wire.GCLog{}, err
	}
	return c.GCLogEntries(context.Background(), id)
}

// GCLogEntries sends GET /session/{id}/wdext/memory/gc-log.
func (c *Client) GCLogEntries(ctx context.Context, sessionID string) (wire.GCLog, error) {
	var out wire.GCLog
	err := c.Do(ctx, http.MethodGet, "/session/"+sessionID+"/wdext/memory/gc-log", nil, &out)
	return out, err
}

// StartLiveObjects starts recording the current page's allocations.
func StartLiveObjects(wd selenium.WebDriver) error {
	c, id, err := forSession(wd)
	if err != nil {
		return err
	}
	return c.StartLiveObjects(context.Background(), id)
}

// StartLiveObjects sends POST /session/{id}/wdext/memory/live-objects/start.
func (c *Client) StartLiveObjects(ctx context.Context, sessionID string) error {
	return c.Do(ctx, http.MethodPost, "/session/"+sessionID+"/wdext/memory/live-objects/start", struct{}{}, nil)
}

// StopLiveObjects stops recording and returns the objects allocated since
// StartLiveObjects that are still alive, grouped by creation site.
func StopLiveObjects(wd selenium.WebDriver) (wire.LiveObjects, error) {
	c, id, err := forSession(wd)
	if err != nil {
		return wire.LiveObjects{}, err
	}
	return c.StopLiveObjects(context.Background(), id)
}

// StopLiveObjects sends POST /session/{id}/wdext/memory/live-objects/stop.
func (c *Client) StopLiveObjects(ctx context.Context, sessionID string) (wire.LiveObjects, error) {
	var out wire.LiveObjects
	err := c.Do(ctx, http.MethodPost, "/session/"+sessionID+"/wdext/memory/live-objects/stop", struct{}{}, &out)
	return out, err
}
