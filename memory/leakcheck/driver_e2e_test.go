package leakcheck_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tebeka/selenium"
	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/webdriver/wdclient"
	"github.com/wdext/wdext/wire"
)

// clickAndRead is one iteration as a Selenium test writes it: find the
// button, click it, find the rows it rendered and read one.
func (e *env) clickAndRead(t *testing.T, button string) {
	t.Helper()
	el, err := e.wd.FindElement(selenium.ByCSSSelector, button)
	assert.NilError(t, err)
	assert.NilError(t, el.Click())
	rows, err := e.wd.FindElements(selenium.ByCSSSelector, "li.row")
	assert.NilError(t, err)
	assert.Equal(t, len(rows), 20)
	text, err := rows[0].Text()
	assert.NilError(t, err)
	assert.Assert(t, strings.HasPrefix(text, "row "), text)
}

// checkClicks is the leak check of n iterations of clickAndRead, after
// one to warm up, in one call (wdclient.CheckLeaks), as a Go test writes
// it: a verdict that names groups is a *wdclient.LeakError.
func (e *env) checkClicks(t *testing.T, button string, n int) (wire.LeakReport, error) {
	t.Helper()
	e.open(t, "driver.html")
	return wdclient.CheckLeaks(e.wd, func() error {
		e.clickAndRead(t, button)
		return nil
	}, n, 1)
}

// The elements a test looked up, detached since, are held by
// chromedriver (its DevTools handles and ret_nodes global), not by the
// page: no leak, at any N; the page's own detached div still is, and
// small objects are, each from the page function that made them although
// the driver's atoms ran between (wdext's --no-compact, docs/leaks.md).
func TestLeakCheckDriverHeld(t *testing.T) {
	e := start(t)
	for _, n := range []int{3, 5} {
		r, err := e.checkClicks(t, "#render", n)
		assert.NilError(t, err)
		assert.DeepEqual(t, r.Leaks, []wire.Leak{})
		r, err = e.checkClicks(t, "#leak", n)
		var le *wdclient.LeakError
		assert.Assert(t, errors.As(err, &le), "%v", err)
		assert.DeepEqual(t, le.Report, r)
		assert.Assert(t, strings.Contains(err.Error(), "\n  detached-dom HTMLDivElement div.kept: +1 per iteration"), err.Error())
		assert.Equal(t, len(r.Leaks), 1, "%+v", r.Leaks)
		l := r.Leaks[0]
		assert.Equal(t, l.Kind+" "+l.Name, "detached-dom HTMLDivElement div.kept")
		assert.Equal(t, l.CountDelta, int64(n))
		assert.DeepEqual(t, l.RetainerPath[:3], []string{"Window", "kept (property)", "Array"})
		assertMadeBy(t, l, "keep")

		r, err = e.checkClicks(t, "#records", n)
		assert.Assert(t, errors.As(err, &le), "%v", err)
		assert.Equal(t, len(r.Leaks), 1, "%+v", r.Leaks)
		l = r.Leaks[0]
		assert.Equal(t, l.Kind+" "+l.Name, "objects Record")
		assert.Equal(t, l.PerIteration, int64(50))
		assert.DeepEqual(t, l.RetainerPath[:3], []string{"Window", "records (property)", "Array"})
		assertMadeBy(t, l, "keepRecords")
	}
}

// assertMadeBy checks that l was made by the page's function fn in
// driver.html.
func assertMadeBy(t *testing.T, l wire.Leak, fn string) {
	t.Helper()
	f := l.CreatedFrom
	assert.Assert(t, f != nil, "%s %s: no createdFrom", l.Kind, l.Name)
	assert.Equal(t, f.FunctionName, fn)
	assert.Assert(t, strings.HasSuffix(f.URL, "/leaks/driver.html") && f.Line > 0, "%+v", f)
}

// A timer a click sets and no one clears is one group, by its callback,
// that retains what the callback's closure holds (40,000 doubles), with
// a path through Blink's timer to the callback; the array is the
// timer's, not a group of its own.
func TestLeakCheckTimers(t *testing.T) {
	e := start(t)
	for _, n := range []int{3, 5} {
		r, err := e.checkClicks(t, "#timer", n)
		var le *wdclient.LeakError
		assert.Assert(t, errors.As(err, &le), "%v", err)
		assert.Equal(t, len(r.Leaks), 1, "%+v", r.Leaks)
		l := r.Leaks[0]
		assert.Equal(t, l.Kind+" "+l.Name, "timers poll()")
		assert.Equal(t, l.PerIteration, int64(1))
		t.Logf("n=%d retained %d per iteration %d, path %q", n, l.RetainedBytes, l.RetainedPerIteration, l.RetainerPath)
		assert.Assert(t, l.RetainedPerIteration >= 320000 && l.RetainedPerIteration < 352000, "%d", l.RetainedPerIteration)
		assert.Equal(t, l.RetainerPath[0], "Window")
		assert.DeepEqual(t, l.RetainerPath[len(l.RetainerPath)-1], "poll()")
		assert.Assert(t, slices.Contains(l.RetainerPath, "DOMTimer"), "%q", l.RetainerPath)
		// The array is in V8's large-object space, which never moves, so
		// its stack survived the element commands even before wdext's
		// --no-compact (docs/leaks.md).
		assert.Assert(t, l.CreatedFrom != nil && l.CreatedFrom.FunctionName == "startPolling", "%+v", l.CreatedFrom)
	}
}

// A window listener a click adds, whose closure holds 1,000 objects, is
// one group, the engine's count, that retains the closure and what it
// holds, with a path to the handler; the objects are the listener's, not
// a group of their own. On WebKitGTK, whose inspector names no handler,
// the handlers are the new functions the window's wrapper holds.
func TestLeakCheckListeners(t *testing.T) {
	for _, engine := range []struct {
		name    string
		start   func(*testing.T) *env
		handler string
	}{{"chromium", start, "onCustom()"}, {"webkitgtk", startWebKitGTK, "Function()"}} {
		t.Run(engine.name, func(t *testing.T) {
			e := engine.start(t)
			for _, n := range []int{3, 5} {
				r, err := e.checkClicks(t, "#listener", n)
				var le *wdclient.LeakError
				assert.Assert(t, errors.As(err, &le), "%v", err)
				assert.Equal(t, len(r.Leaks), 1, "%+v", r.Leaks)
				l := r.Leaks[0]
				t.Logf("n=%d retained %d per iteration %d, path %q", n, l.RetainedBytes, l.RetainedPerIteration, l.RetainerPath)
				assert.Equal(t, l.Kind+" "+l.Name, "event-listeners Window custom-click")
				assert.Equal(t, l.PerIteration, int64(1))
				assert.Equal(t, l.RetainerPath[0], "Window")
				assert.Equal(t, l.RetainerPath[len(l.RetainerPath)-1], engine.handler)
				assert.Assert(t, l.RetainedPerIteration >= 16000, "%d", l.RetainedPerIteration)
			}
		})
	}
}
