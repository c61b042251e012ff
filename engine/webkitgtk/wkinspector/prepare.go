package wkinspector

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"
)

// prepareTimeout bounds preparing a new page backend (PrepareBackends):
// past it, the navigation goes on without what is left.
const prepareTimeout = 5 * time.Second

// PrepareBackends makes every later navigation that moves the page to a
// new web process wait, before the new document loads, until cmds have
// run on the new backend (Target.setPauseOnStart, then Target.resume
// once they have, or after prepareTimeout). The new backend starts with
// every domain off, and what is enabled once the navigation has
// committed comes after the new document's first scripts have run
// (measured on WebKitGTK 2.50.6: a page that spins at once got no
// periodic samples). Commands of several calls run in the order given,
// each once (an equal method and params is sent once); their results are
// dropped, and failed hears of the first error of each preparation.
func (c *Conn) PrepareBackends(ctx context.Context, failed func(error), cmds ...Command) error {
	c.mu.Lock()
	for _, cmd := range cmds {
		cmd.Result = nil
		if !slices.ContainsFunc(c.prepare, func(p Command) bool { return sameCommand(p, cmd) }) {
			c.prepare = append(c.prepare, cmd)
		}
	}
	if failed != nil {
		c.failed = append(c.failed, failed)
	}
	pausing := c.pausing
	c.pausing = true
	c.mu.Unlock()
	if pausing {
		return nil
	}
	err := c.send(ctx, route{top: true}, Command{Method: "Target.setPauseOnStart", Params: map[string]any{"pauseOnStart": true}})
	if err != nil {
		c.mu.Lock()
		c.pausing = false
		c.mu.Unlock()
	}
	return err
}

func sameCommand(a, b Command) bool {
	if a.Method != b.Method {
		return false
	}
	pa, errA := json.Marshal(a.Params)
	pb, errB := json.Marshal(b.Params)
	return errA == nil && errB == nil && string(pa) == string(pb)
}

// prepareAndResume runs the prepared commands on a new page backend that
// waits paused (a target of another type only waits), then lets it go
// on. It runs on the reader, so the work goes to a goroutine.
func (c *Conn) prepareAndResume(target string, page bool) {
	c.mu.Lock()
	cmds, failed := slices.Clone(c.prepare), slices.Clone(c.failed)
	c.mu.Unlock()
	c.preparing.Add(1)
	go func() { // owned by c: bounded by prepareTimeout, and Close waits
		defer c.preparing.Done()
		ctx, cancel := context.WithTimeout(context.Background(), prepareTimeout)
		defer cancel()
		var err error
		if page && len(cmds) > 0 {
			err = c.send(ctx, route{target: target}, cmds...)
		}
		// Resumed whatever happened, with a deadline of its own: a
		// backend left paused would hang the navigation.
		rctx, rcancel := context.WithTimeout(context.Background(), writeTimeout)
		defer rcancel()
		err = errors.Join(err, c.send(rctx, route{top: true}, Command{Method: "Target.resume", Params: map[string]any{"targetId": target}}))
		if err != nil && !errors.Is(err, ErrClosed) {
			for _, f := range failed {
				f(err)
			}
		}
	}()
}
