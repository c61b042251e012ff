package forcetrace

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/chromium/cdp"
	"github.com/wdext/wdext/engine/chromium/cdp/cdptest"
)

// A session bound after Observe talks to its browser through a proxy,
// which reads the trace of a force's window before the engine's IO.close
// of it goes through, and reports the triggers and strays it shows.
func TestObserveReadsTheTrace(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	fake := cdptest.NewServer(t, func(c *cdptest.Conn, req cdptest.Request) {
		mu.Lock()
		calls = append(calls, req.Method)
		mu.Unlock()
		switch req.Method {
		case "Tracing.end":
			c.Reply(req, map[string]any{})
			c.Event("", "Tracing.tracingComplete", map[string]any{"dataLossOccurred": false, "stream": "s1"})
		case "IO.read":
			c.Reply(req, map[string]any{"base64Encoded": true, "eof": true, "data": Trace(
				Event{Name: "TimeStamp", Pid: 2, Tid: 2, Data: map[string]any{"message": "wdext forcesample T1", "sampleTraceId": 1}},
				Event{Name: "FunctionCall", Pid: 2, Tid: 2, Data: map[string]any{"functionName": "tick", "sampleTraceId": 2}},
			)})
		default:
			c.Reply(req, map[string]any{})
		}
	}, nil)

	reports := make(chan ForceReport, 1)
	var got engine.NewSession
	bind := engine.Binder(func(_ context.Context, s engine.NewSession) (engine.Engine, error) {
		got = s
		return nil, nil
	})
	caps := map[string]any{"browserName": "chrome", "goog:chromeOptions": map[string]any{"debuggerAddress": fake.Addr()}}
	defer Observe(t, &bind, func(r ForceReport) { reports <- r })()
	_, _ = bind(context.Background(), engine.NewSession{ID: "s1", Capabilities: caps})
	addr := got.Capabilities["goog:chromeOptions"].(map[string]any)["debuggerAddress"].(string)
	assert.Check(t, addr != fake.Addr(), "the session talks to the browser directly")
	assert.Check(t, is.Equal(caps["goog:chromeOptions"].(map[string]any)["debuggerAddress"], fake.Addr()), "the driver's reply changed")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := cdp.Dial(ctx, addr)
	assert.NilError(t, err)
	defer conn.Close()
	complete, stop := conn.Subscribe("Tracing.tracingComplete")
	defer stop()
	hold := map[string]any{"expression": holdScript}
	assert.NilError(t, conn.Call(ctx, "Runtime.evaluate", hold, nil))
	assert.NilError(t, conn.Call(ctx, "Tracing.start", map[string]any{"perfettoConfig": []byte(`{"included_categories":["devtools.timeline"]}`)}, nil))
	assert.NilError(t, conn.Call(ctx, "Runtime.evaluate", map[string]any{"expression": `console.timeStamp("wdext forcesample T1")`}, nil))
	assert.NilError(t, conn.Call(ctx, "Tracing.end", nil, nil))
	<-complete
	assert.NilError(t, conn.Call(ctx, "IO.close", map[string]any{"handle": "s1"}, nil))
	assert.NilError(t, conn.Call(ctx, "Debugger.resume", nil, nil))

	var r ForceReport
	select {
	case r = <-reports:
	case <-ctx.Done():
		t.Fatal("no report")
	}
	assert.Check(t, is.Equal(r.Isolates, 1))
	assert.Check(t, is.Equal(r.Samples, 1))
	assert.Check(t, is.DeepEqual(r.Strays, []string{"FunctionCall tick"}))
	assert.Check(t, r.Verified)
	assert.Check(t, r.Window > 0)
	mu.Lock()
	defer mu.Unlock()
	read, closed := slices.Index(calls, "IO.read"), slices.Index(calls, "IO.close")
	assert.Check(t, read >= 0 && read < closed, "%v", calls)
}
