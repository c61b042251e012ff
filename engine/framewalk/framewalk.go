package framewalk

import (
	"context"
	"fmt"
	"strings"

	"github.com/wdext/wdext/engine"
)

// framePathScript answers the current browsing context's path from its
// top-level one: the child index (as Switch To Frame takes it) at each
// level. WindowProxy comparison and indexing work across origins.
const framePathScript = `const path = []; let w = window;
while (w !== w.parent) { const p = w.parent; let i = 0; while (i < p.length && p[i] !== w) i++; path.unshift(i); w = p; }
return path;`

// visitScript forces the sample in one frame and answers how many child
// frames it has.
const visitScript = `const f = globalThis[Symbol.for("wdext.profiler.forceSample")];
return [typeof f === "function" ? f() : -1, window.length];`

// ForceSample forces a sample through the Profiler polyfill (package
// polyfill) in every frame of every window of the session that driver
// reaches, with WebDriver commands sent straight to the driver, and then
// puts the client's current window and frame back as they were.
func ForceSample(ctx context.Context, driver engine.Driver) error {
	d := &wd{ctx: ctx, driver: driver}
	var current string
	if err := d.call("GET", "/window", nil, &current); err != nil {
		return err
	}
	var path []int
	if err := d.call("POST", "/execute/sync", map[string]any{"script": framePathScript, "args": []any{}}, &path); err != nil {
		// The current frame is gone: the client gets its top-level
		// browsing context back.
		path = nil
	}
	var handles []string
	if err := d.call("GET", "/window/handles", nil, &handles); err != nil {
		return err
	}
	var firstErr error
	for _, h := range handles {
		if err := d.call("POST", "/window", map[string]any{"handle": h}, nil); err != nil {
			continue // closed meanwhile
		}
		if err := d.visit(); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	// Restore: the window, then the frame path from its top.
	if err := d.call("POST", "/window", map[string]any{"handle": current}, nil); err != nil {
		return err
	}
	for _, i := range path {
		if err := d.call("POST", "/frame", map[string]any{"id": i}, nil); err != nil {
			return fmt.Errorf("restoring the current frame: %w", err)
		}
	}
	return firstErr
}

// visit forces the sample in the current frame and, depth first, in its
// children, and leaves the current frame as it found it.
func (d *wd) visit() error {
	var r [2]int
	if err := d.call("POST", "/execute/sync", map[string]any{"script": visitScript, "args": []any{}}, &r); err != nil {
		return err
	}
	for i := range r[1] {
		if err := d.call("POST", "/frame", map[string]any{"id": i}, nil); err != nil {
			continue // removed meanwhile
		}
		err := d.visit()
		if perr := d.call("POST", "/frame/parent", map[string]any{}, nil); perr != nil {
			return perr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// wd sends WebDriver commands of one session to its driver, within one
// force's context.
type wd struct {
	ctx    context.Context
	driver engine.Driver
}

func (d *wd) call(method, path string, body any, out any) error {
	return d.driver.Do(d.ctx, method, strings.TrimPrefix(path, "/"), body, out)
}
