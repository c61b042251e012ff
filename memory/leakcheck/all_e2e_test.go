package leakcheck_test

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/webdriver/wdclient"
	"github.com/wdext/wdext/wire"
)

// "targets": "all": a verdict for the page and one for each isolate below
// it, each finding its own leaks only: 2 FrameThings a round in the
// cross-site iframe's, 1 WorkerThing in the worker's, nothing in the
// page's.
func TestLeakCheckAll(t *testing.T) {
	e := start(t)
	assert.NilError(t, e.wd.Get(e.pages.A+"/leaks/frames.html?frame="+e.pages.B+"/leaks/frame.html"))
	round := func() {
		t.Helper()
		_, err := e.wd.ExecuteScriptAsync("ready.then(() => round(arguments[0]))", nil)
		assert.NilError(t, err)
	}
	round() // the classes, arrays and handlers made on first use are no leak
	assert.NilError(t, wdclient.LeakStartAll(e.wd))
	for range iterations {
		round()
	}
	r, err := wdclient.LeakStopAll(e.wd, iterations)
	assert.NilError(t, err)
	assert.Equal(t, r.Iterations, iterations)
	got := map[string]string{}
	for _, tl := range r.Targets {
		assert.Assert(t, tl.Report != nil, "%s %s: %s", tl.Type, tl.URL, tl.Error)
		assert.Assert(t, tl.Report.BytesBefore > 0 && tl.Report.BytesAfter > 0, "%+v", tl)
		assert.Equal(t, tl.Report.Iterations, iterations)
		got[tl.Type] += verdict(*tl.Report)
	}
	assert.DeepEqual(t, got, map[string]string{
		"page":   "",
		"iframe": `objects "FrameThing" 10/2 by Window → kept (property) → Array → FrameThing from onLeak` + "\n",
		"worker": `objects "WorkerThing" 5/1 by DedicatedWorkerGlobalScope → kept (property) → Array → WorkerThing from onmessage` + "\n",
	})
	assert.Equal(t, r.Targets[0].Type, "page")

	// A check of the page alone sees none of them.
	assert.NilError(t, wdclient.LeakStart(e.wd))
	for range iterations {
		round()
	}
	page, err := wdclient.LeakStop(e.wd, iterations)
	assert.NilError(t, err)
	assert.DeepEqual(t, page.Leaks, []wire.Leak{})

	// Stopped from another window, the check ends unfinished, and says so.
	assert.NilError(t, wdclient.LeakStartAll(e.wd))
	first, err := e.wd.CurrentWindowHandle()
	assert.NilError(t, err)
	_, err = e.wd.ExecuteScript("window.open('about:blank')", nil)
	assert.NilError(t, err)
	handles, err := e.wd.WindowHandles()
	assert.NilError(t, err)
	for _, h := range handles {
		if h != first {
			assert.NilError(t, e.wd.SwitchWindow(h))
		}
	}
	_, err = wdclient.LeakStopAll(e.wd, iterations)
	assert.ErrorContains(t, wdError(t, err), "the check is ended")
	_, err = wdclient.LeakStopAll(e.wd, iterations)
	assert.ErrorContains(t, wdError(t, err), "leaks/stop before leaks/start")
}
