package chromium

import (
	"errors"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/chromedp/cdproto/target"
	"github.com/wdext/wdext/memory/measurement"
)

// Frames cut off from the top (their parent went away) are dropped with
// their descendants.
func TestConnected(t *testing.T) {
	got := connected([]measurement.EngineFrame{
		{ID: "top"}, {ID: "a", ParentID: "top"}, {ID: "b", ParentID: "gone"}, {ID: "c", ParentID: "b"}, {ID: "d", ParentID: "a"},
		{ID: "x", ParentID: "y"}, {ID: "y", ParentID: "x"},
	})
	var ids []string
	for _, f := range got {
		ids = append(ids, f.ID)
	}
	assert.DeepEqual(t, ids, []string{"top", "a", "d"})
}

// The timeout message names what never collected, not what merely has a
// later collection under way.
func TestForcerReport(t *testing.T) {
	f := &forcer{state: map[string]*gcState{}}
	add := func(iso, typ, url string, st gcState) {
		st.who = describe(typ, url)
		f.state[iso], f.order = &st, append(f.order, iso)
	}
	add("p", "page", "https://a.test/", gcState{inflight: true, since: time.Now(), done: 3})
	add("w", "worker", "https://a.test/w.js", gcState{inflight: true, since: time.Now().Add(-2 * time.Second)})
	add("i", "iframe", "https://b.test/", gcState{err: errors.New("boom")})
	r := f.report(4)
	assert.Assert(t, is.Contains(r, "forced 4 round(s)"))
	assert.Assert(t, is.Contains(r, "Still pending: a garbage collection in dedicated worker https://a.test/w.js, requested 2.0 s ago"), r)
	assert.Assert(t, is.Contains(r, "Failed: out-of-process iframe https://b.test/ (boom)"), r)
	assert.Assert(t, is.Contains(r, "Completed (collections): page https://a.test/ (3)"), r)
	assert.Assert(t, !strings.Contains(r, "in page"), r)

	f = &forcer{state: map[string]*gcState{}}
	add("p", "page", "https://a.test/", gcState{done: 2})
	assert.Assert(t, is.Contains(f.report(2), "Every isolate has completed a forced garbage collection, yet the promise has not settled"))
}

func TestSceneIsolates(t *testing.T) {
	n := func(typ, iso string) *node { return &node{info: &target.Info{Type: typ}, isolate: iso} }
	p, i1, i2, w := n("page", "A"), n("iframe", "A"), n("iframe", "B"), n("worker", "W")
	sc := &scene{page: p, nodes: []*node{p, i1, i2, w}}
	got := sc.isolates()
	assert.Equal(t, len(got), 3)
	assert.Assert(t, got[0] == p && got[1] == i2 && got[2] == w)
}
