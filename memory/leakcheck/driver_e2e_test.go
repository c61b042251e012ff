package leakcheck_test

import (
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
// one to warm up.
func (e *env) checkClicks(t *testing.T, button string, n int) wire.LeakReport {
	t.Helper()
	e.open(t, "driver.html")
	e.clickAndRead(t, button)
	assert.NilError(t, wdclient.LeakStart(e.wd))
	for range n {
		e.clickAndRead(t, button)
	}
	r, err := wdclient.LeakStop(e.wd, n)
	assert.NilError(t, err)
	return r
}

// The elements a test looked up, detached since, are held by
// chromedriver (its DevTools handles and ret_nodes global), not by the
// page: no leak, at any N; the page's own detached div still is.
func TestLeakCheckDriverHeld(t *testing.T) {
	e := start(t)
	for _, n := range []int{3, 5} {
		r := e.checkClicks(t, "#render", n)
		assert.DeepEqual(t, r.Leaks, []wire.Leak{})
		r = e.checkClicks(t, "#leak", n)
		assert.Equal(t, len(r.Leaks), 1, "%+v", r.Leaks)
		l := r.Leaks[0]
		assert.Equal(t, l.Kind+" "+l.Name, "detached-dom HTMLDivElement div.kept")
		assert.Equal(t, l.CountDelta, int64(n))
		assert.DeepEqual(t, l.RetainerPath[:3], []string{"Window", "kept (property)", "Array"})
	}
}
