package leakcheck_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/tebeka/selenium"
	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/webdriver/wdclient"
	"github.com/wdext/wdext/wire"
)

// pace is the least time an iteration of churn.html takes, as a render
// or a request would in an app: two of the 50 ms updates in which
// DevTools gives the new objects their ids, which tell the iterations
// apart (quicker ones are checked by fuite's rule alone).
const pace = 150 * time.Millisecond

// clickRound clicks button and waits until the page counted the click.
func (e *env) clickRound(t *testing.T, button string) {
	t.Helper()
	status, err := e.wd.FindElement(selenium.ByCSSSelector, "#status")
	assert.NilError(t, err)
	before, err := status.Text()
	assert.NilError(t, err)
	el, err := e.wd.FindElement(selenium.ByCSSSelector, button)
	assert.NilError(t, err)
	assert.NilError(t, el.Click())
	n, err := strconv.Atoi(before)
	assert.NilError(t, err)
	assert.NilError(t, e.wd.WaitWithTimeout(func(wd selenium.WebDriver) (bool, error) {
		text, err := status.Text()
		return text == strconv.Itoa(n+1), err
	}, 10*time.Second))
	time.Sleep(pace)
}

// A structure the page makes anew at each iteration, of a constant size
// that N divides, is not reported, whatever N; objects kept at each one
// are, with the same count per iteration at every N (see below for
// which entry names them).
func TestLeakCheckGrowthNotChurn(t *testing.T) {
	e := start(t)
	for _, n := range []int{3, 5, 7, 10} {
		for _, button := range []string{"#rebuild", "#keep"} {
			e.open(t, "churn.html")
			e.clickRound(t, button)
			assert.NilError(t, wdclient.LeakStart(e.wd))
			for range n {
				e.clickRound(t, button)
			}
			r, err := wdclient.LeakStop(e.wd, n)
			assert.NilError(t, err)
			if button == "#rebuild" {
				assert.DeepEqual(t, r.Leaks, []wire.Leak{})
				continue
			}
			assert.Equal(t, len(r.Leaks), 1, "N=%d: %+v", n, r.Leaks)
			l := r.Leaks[0]
			// The objects, or, when a renderer too busy to give them
			// their ids on time makes their bursts unclear (measured
			// once on a loaded CI run, at N=10), the array that keeps
			// them: a leak of 2 an iteration either way.
			what := l.Kind + " " + l.Name
			assert.Assert(t, what == "objects Kept" || what == "collection Window.kept (Array)", "N=%d: %s", n, what)
			if what != "objects Kept" {
				t.Logf("N=%d: reported as %s", n, what)
			}
			assert.Equal(t, l.PerIteration, int64(2), "N=%d", n)
			assert.Equal(t, l.CountDelta, int64(2*n), "N=%d", n)
		}
	}
}

// A page that keeps its last two renders (React's current and alternate
// trees), in copies of 13 and 26 objects: at N=3 their bursts read as a
// growth of 13, but the iteration marks CheckLeaks sends show nothing was
// kept from the first iteration. Growth is still found with the marks.
func TestLeakCheckMarkedIterations(t *testing.T) {
	e := start(t)
	for _, n := range []int{3, 4, 5} {
		e.open(t, "churn.html")
		r, err := wdclient.CheckLeaks(e.wd, func() error { e.clickRound(t, "#double"); return nil }, n, 1)
		assert.NilError(t, err, "N=%d: %+v", n, r.Leaks)
	}
	e.open(t, "churn.html")
	r, err := wdclient.CheckLeaks(e.wd, func() error { e.clickRound(t, "#keep"); return nil }, 3, 1)
	var le *wdclient.LeakError
	assert.Assert(t, errors.As(err, &le), "%v", err)
	assert.Equal(t, len(r.Leaks), 1, "%+v", r.Leaks)
	assert.Equal(t, r.Leaks[0].PerIteration, int64(2))
}

// On WebKitGTK, where JavaScriptCore gives a cell its id when a snapshot
// first sees it, the marks (a snapshot each) tell the iterations apart
// too: the table made anew and the two kept renders are no leak at any
// N, the objects kept at each iteration are.
func TestLeakCheckMarkedIterationsWebKitGTK(t *testing.T) {
	e := startWebKitGTK(t)
	for _, n := range []int{3, 4, 5} {
		for _, button := range []string{"#rebuild", "#double"} {
			e.open(t, "churn.html")
			r, err := wdclient.CheckLeaks(e.wd, func() error { e.clickRound(t, button); return nil }, n, 1)
			assert.NilError(t, err, "%s N=%d: %+v", button, n, r.Leaks)
		}
		e.open(t, "churn.html")
		r, err := wdclient.CheckLeaks(e.wd, func() error { e.clickRound(t, "#keep"); return nil }, n, 1)
		var le *wdclient.LeakError
		assert.Assert(t, errors.As(err, &le), "N=%d: %v", n, err)
		assert.Equal(t, len(r.Leaks), 1, "N=%d: %+v", n, r.Leaks)
		assert.Equal(t, r.Leaks[0].Kind+" "+r.Leaks[0].Name, "objects Kept")
		assert.Equal(t, r.Leaks[0].PerIteration, int64(2))
	}
}
