package firefox_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tebeka/selenium"
	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/webdriver/wdclient"
	"github.com/wdext/wdext/wire"
)

// Live objects on Firefox are SpiderMonkey's census by allocation stack
// of what was allocated between start and stop and is alive at the stop:
// a Selenium click that keeps 1000 Foo counts them at make(), as
// "Object" (objectClass), and not the 500 objects the page made as it
// loaded, nor what Marionette's element commands made in the page.
func TestLiveObjects(t *testing.T) {
	url, _ := start(t)
	wd, pages, s := formSession(t, url)
	checkN := func(t *testing.T, n int64) {
		assert.NilError(t, wd.Get(fmt.Sprintf("%s/firefox/alloc.html?n=%d", pages.A, n)))
		assert.NilError(t, wdclient.StartLiveObjects(wd))
		button, err := wd.FindElement(selenium.ByID, "make")
		assert.NilError(t, err)
		assert.NilError(t, button.Click())
		live, err := wdclient.StopLiveObjects(wd)
		assert.NilError(t, err)
		var foo, kept *wire.LiveObjectGroup
		for i, g := range live.LiveObjects {
			assert.Assert(t, len(g.CreatedFrom) > 0, "%+v", g)
			src := g.CreatedFrom[0].Source
			assert.Assert(t, !strings.HasPrefix(src, "chrome:") && !strings.HasPrefix(src, "resource:"), "the driver's: %+v", g)
			assert.Assert(t, g.CreatedFrom[0].FunctionDisplayName != "load", "made before the start: %+v", g)
			if g.CreatedFrom[0].FunctionDisplayName == "make" && strings.Contains(src, "/firefox/alloc.html?") {
				switch g.Class {
				case "Object":
					foo = &live.LiveObjects[i]
				case "Array":
					kept = &live.LiveObjects[i]
				}
			}
		}
		assert.Assert(t, foo != nil, "no Object at make(): %+v", live)
		assert.Equal(t, foo.Count, n, "%+v", *foo)
		assert.Assert(t, foo.InstanceSize >= n*24, "%+v", *foo)
		assert.Assert(t, kept != nil, "no Array at make(): %+v", live)
		assert.Equal(t, kept.Count, int64(1), "%+v", *kept)
		assert.Assert(t, live.Count >= n+1, "%+v", live)
	}
	check := func(t *testing.T) { checkN(t, 1000) }
	t.Run("alone", check)
	// A loop hot enough for the optimizing tier, whose allocations
	// SpiderMonkey places at the loop's head: one group still.
	t.Run("a hot loop", func(t *testing.T) { checkN(t, 100_000) })
	// With the allocation log on from before the page loaded, the 500
	// objects of load() have stacks too: they are counted at the start
	// and taken off.
	t.Run("beside the allocation log", func(t *testing.T) {
		status, body := post(t, s+"/wdext/memory/allocations", `{"trackingAllocationSites": true, "allocationSamplingProbability": 0.5}`)
		assert.Equal(t, status, 200, body)
		check(t)
		// The log samples at 1 while live objects are tracked, and says so.
		status, body = post(t, s+"/wdext/memory/allocations/drain", `{}`)
		assert.Equal(t, status, 200, body)
		status, body = post(t, s+"/wdext/memory/allocations", `{"trackingAllocationSites": false}`)
		assert.Equal(t, status, 200, body)
	})
	// Tracked for live objects alone, SpiderMonkey's log is one entry
	// long and overflows at every allocation: a log asked for then starts
	// empty, and is not overflowed.
	t.Run("a log asked for during the tracking", func(t *testing.T) {
		assert.NilError(t, wd.Get(pages.A+"/firefox/alloc.html"))
		assert.NilError(t, wdclient.StartLiveObjects(wd))
		click := func() {
			button, err := wd.FindElement(selenium.ByID, "make")
			assert.NilError(t, err)
			assert.NilError(t, button.Click())
		}
		click()
		status, body := post(t, s+"/wdext/memory/allocations", `{"trackingAllocationSites": true, "allocationSamplingProbability": 1}`)
		assert.Equal(t, status, 200, body)
		click()
		status, body = post(t, s+"/wdext/memory/allocations/drain", `{}`)
		assert.Equal(t, status, 200, body)
		var log struct {
			Value wire.AllocationsLog `json:"value"`
		}
		assert.NilError(t, json.Unmarshal([]byte(body), &log))
		assert.Assert(t, !log.Value.Overflowed, "%d entries", len(log.Value.Log))
		inMake := 0
		for _, e := range log.Value.Log {
			if e.Frame != nil && e.Frame.FunctionDisplayName == "make" {
				inMake++
			}
		}
		assert.Assert(t, inMake >= 1000 && inMake < 2000, "%d of %d entries in make(): the second click's only", inMake, len(log.Value.Log))
		status, body = post(t, s+"/wdext/memory/allocations", `{"trackingAllocationSites": false}`)
		assert.Equal(t, status, 200, body)
		live, err := wdclient.StopLiveObjects(wd)
		assert.NilError(t, err)
		assert.Assert(t, live.Count >= 1001, "%+v", live)
	})
	status, body := post(t, s+"/wdext/memory/live-objects/stop", `{}`)
	assert.Equal(t, status, 500, body)
	assert.Assert(t, strings.Contains(body, `"error":"unsupported operation"`), body)
}
