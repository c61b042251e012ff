package wdclient

import (
	"context"
	"net/http"
	"time"

	"github.com/tebeka/selenium"
	"github.com/wdext/wdext/wire"
)

// MeasureOptions are the parameters of the memory measure command.
type MeasureOptions struct {
	// Source is wire.SourceAPI, wire.SourceEngine, or "" for wdext's
	// default (the API where the page is cross-origin isolated).
	Source string
	// Timeout bounds the command on the server; 0 leaves wdext's default
	// (the measure command's default).
	Timeout time.Duration
}

func (o MeasureOptions) params() map[string]any {
	p := map[string]any{}
	if o.Source != "" {
		p["source"] = o.Source
	}
	if o.Timeout > 0 {
		// Whole milliseconds, rounded up: a tiny timeout is not "none".
		p["timeout"] = (o.Timeout + time.Millisecond - 1).Milliseconds()
	}
	return p
}

// MeasureMemory measures the memory of wd's current top-level browsing
// context (POST /session/{id}/wdext/memory/measure), in the shape of the
// Measure Memory API's MemoryMeasurement.
func MeasureMemory(wd selenium.WebDriver, opts MeasureOptions) (*wire.MemoryMeasurement, error) {
	c, err := For(wd)
	if err != nil {
		return nil, err
	}
	return c.MeasureMemory(context.Background(), wd.SessionID(), opts)
}

// MeasureMemory sends POST /session/{id}/wdext/memory/measure.
func (c *Client) MeasureMemory(ctx context.Context, sessionID string, opts MeasureOptions) (*wire.MemoryMeasurement, error) {
	var m wire.MemoryMeasurement
	if err := c.Do(ctx, http.MethodPost, "/session/"+sessionID+"/wdext/memory/measure", opts.params(), &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// CollectGarbage runs a full garbage collection in wd's current page, its
// out-of-process iframes and its dedicated workers (POST
// /session/{id}/wdext/memory/gc), and returns each isolate's used heap
// before and after.
func CollectGarbage(wd selenium.WebDriver) (*wire.GCResult, error) {
	c, err := For(wd)
	if err != nil {
		return nil, err
	}
	return c.CollectGarbage(context.Background(), wd.SessionID())
}

// CollectGarbage sends POST /session/{id}/wdext/memory/gc.
func (c *Client) CollectGarbage(ctx context.Context, sessionID string) (*wire.GCResult, error) {
	var r wire.GCResult
	if err := c.Do(ctx, http.MethodPost, "/session/"+sessionID+"/wdext/memory/gc", struct{}{}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
