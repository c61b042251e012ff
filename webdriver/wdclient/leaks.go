package wdclient

import (
	"context"
	"errors"
	"net/http"

	"github.com/tebeka/selenium"
	"github.com/wdext/wdext/wire"
)

// The leak check (package memory/leakcheck): LeakStart, run the scenario
// N times, LeakStop(N).

// LeakStart starts a leak check of the current page: a GC, a baseline
// heap snapshot, allocation sites recorded from now on.
func LeakStart(wd selenium.WebDriver) error {
	c, id, err := forSession(wd)
	if err != nil {
		return err
	}
	return c.LeakStart(context.Background(), id)
}

// LeakStart sends POST /session/{id}/wdext/memory/leaks/start.
func (c *Client) LeakStart(ctx context.Context, sessionID string) error {
	return c.Do(ctx, http.MethodPost, "/session/"+sessionID+"/wdext/memory/leaks/start", struct{}{}, nil)
}

// LeakStop ends the leak check begun by LeakStart after the scenario ran
// iterations times, and returns the verdict: what grew by a multiple of
// iterations, with retainer paths and creation sites.
func LeakStop(wd selenium.WebDriver, iterations int) (wire.LeakReport, error) {
	c, id, err := forSession(wd)
	if err != nil {
		return wire.LeakReport{}, err
	}
	return c.LeakStop(context.Background(), id, iterations)
}

// LeakStop sends POST /session/{id}/wdext/memory/leaks/stop.
func (c *Client) LeakStop(ctx context.Context, sessionID string, iterations int) (wire.LeakReport, error) {
	var out wire.LeakReport
	err := c.Do(ctx, http.MethodPost, "/session/"+sessionID+"/wdext/memory/leaks/stop", wire.LeakStopArgs{Iterations: iterations}, &out)
	return out, err
}

// LeakIteration marks the end of an iteration of the check under way
// (each but the last, or each): where the engine can, the verdict then
// knows which iteration made each new object. CheckLeaks marks them.
func LeakIteration(wd selenium.WebDriver) error {
	c, id, err := forSession(wd)
	if err != nil {
		return err
	}
	return c.LeakIteration(context.Background(), id)
}

// LeakIteration sends POST /session/{id}/wdext/memory/leaks/iteration.
func (c *Client) LeakIteration(ctx context.Context, sessionID string) error {
	return c.Do(ctx, http.MethodPost, "/session/"+sessionID+"/wdext/memory/leaks/iteration", struct{}{}, nil)
}

// LeakStartAll starts a leak check in every isolate of the current page:
// the page's, and those of its out-of-process frames and workers.
func LeakStartAll(wd selenium.WebDriver) error {
	c, id, err := forSession(wd)
	if err != nil {
		return err
	}
	return c.LeakStartAll(context.Background(), id)
}

// LeakStartAll sends leaks/start with "targets": "all".
func (c *Client) LeakStartAll(ctx context.Context, sessionID string) error {
	return c.Do(ctx, http.MethodPost, "/session/"+sessionID+"/wdext/memory/leaks/start", wire.LeakStartArgs{Targets: "all"}, nil)
}

// LeakStopAll ends the leak check begun by LeakStartAll and returns each
// isolate's verdict.
func LeakStopAll(wd selenium.WebDriver, iterations int) (wire.AllLeaks, error) {
	c, id, err := forSession(wd)
	if err != nil {
		return wire.AllLeaks{}, err
	}
	return c.LeakStopAll(context.Background(), id, iterations)
}

// LeakStopAll sends leaks/stop after LeakStartAll.
func (c *Client) LeakStopAll(ctx context.Context, sessionID string, iterations int) (wire.AllLeaks, error) {
	var out wire.AllLeaks
	err := c.Do(ctx, http.MethodPost, "/session/"+sessionID+"/wdext/memory/leaks/stop", wire.LeakStopArgs{Iterations: iterations}, &out)
	if err == nil && out.Targets == nil {
		err = errors.New(`wdclient: leaks/stop answered one verdict: the check was started without "targets": "all"`)
	}
	return out, err
}
