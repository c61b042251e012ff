package leaks

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// batches adds to a page's store, for each first id, n objects of class
// with consecutive ids from it.
func (p *page) batches(class string, n int, firsts ...uint32) {
	at := 0
	for _, id := range firsts {
		p.nextID = id
		p.add(class, n, at)
		at += n
	}
}

// churn adds n objects of class, ids from first on, in an array made
// with them, held by window.current (the page replaces it each time).
func (p *page) churn(class string, n int, first uint32) {
	list := p.g.Node("object", "Array", first, 16)
	p.g.Edge(p.window, "property", "current", list)
	for k := range n {
		p.g.Element(list, "element", k, p.g.Node("object", class, first+2+2*uint32(k), 24))
	}
}

// With the allocation clock, a group grows when its members were made
// across the iterations; a structure made anew each iteration, of a
// constant size, is churn: only its last copy is alive, made in one
// stretch at the end, and it is no leak at any N.
func TestGrowthNotChurn(t *testing.T) {
	b := newPage(0) // ids up to 11
	const clock = 10011
	check := func(n int, clock uint32, f *page) []string {
		r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: n, Clock: clock})
		return names(r)
	}

	// 2 Foo an iteration, 3 iterations: 3 bursts.
	f := newPage(0)
	f.batches("Foo", 2, 1001, 4001, 8001)
	assert.DeepEqual(t, check(3, clock, f), []string{"objects Foo"})
	// 1 an iteration, 5 iterations, the last two in one burst.
	f = newPage(0)
	f.batches("Foo", 1, 1001, 3001, 5001)
	f.nextID = 9001
	f.add("Foo", 2, 3)
	assert.DeepEqual(t, check(5, clock, f), []string{"objects Foo"})

	// Churn: 6 Rows made in the last iteration, whatever N divides.
	for _, n := range []int{2, 3, 6} {
		f = newPage(0)
		f.churn("Row", 6, 9001)
		assert.Equal(t, strings.Join(check(n, clock, f), ","), "", "N=%d", n)
		// Without the clock (offline, quick iterations): fuite's rule.
		assert.Equal(t, strings.Join(check(n, 0, f), ","), "objects Row", "N=%d", n)
	}
	// Churn with a stray made early (a one-time object of the class).
	f = newPage(0)
	f.batches("Row", 1, 1001)
	f.churn("Row", 5, 9001)
	assert.DeepEqual(t, check(3, clock, f), []string{})
	// Growth and churn in one group (1 kept a round, 3 made anew): the
	// last burst is too big for growth alone.
	f = newPage(0)
	f.batches("Row", 1, 1001, 5001)
	f.churn("Row", 4, 9001)
	assert.DeepEqual(t, check(3, clock, f), []string{})
}

// The bursts measured on a React app (Vite build) driven by Selenium
// clicks, and what the rule says of them.
func TestGrewEachIteration(t *testing.T) {
	for _, c := range []struct {
		what   string
		bursts []int64
		n      int
		want   bool
	}{
		{"a forgotten timer's array, 1 a click", []int64{1, 1, 1}, 3, true},
		{"the same, the last two clicks in one burst", []int64{1, 1, 1, 2}, 5, true},
		{"the same at N=10", []int64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 10, true},
		{"a table of 500 rows made anew, and a stray", []int64{1, 500}, 3, false},
		{"React's arrays after re-rendering a list", []int64{5, 7}, 3, false},
		{"React's props objects after navigating", []int64{2, 1, 3, 11, 29, 34}, 5, false},
		{"React's fibers after navigating", []int64{1, 1, 3}, 5, false},
		{"a dialog's objects, opened and closed", []int64{1, 36, 32}, 3, false},
		{"all in one burst", []int64{6}, 3, false},
	} {
		var count int64
		for _, b := range c.bursts {
			count += b
		}
		assert.Equal(t, grewEachIteration(c.bursts, count/int64(c.n)), c.want, c.what)
	}
}

// With the clock's marks where each iteration ended, a group must have
// members from every iteration: the last two copies of a structure
// a framework re-makes (React keeps the current render and the previous
// one) are no leak at N=3, where their sizes pass the burst rule.
func TestGrowthMarked(t *testing.T) {
	b := newPage(0) // ids up to 11
	marks := []uint32{3000, 6000}
	check := func(n int, marks []uint32, f *page) string {
		r := find(t, Input{Baseline: sum(t, b.g), Final: build(t, f.g), Iterations: n, Clock: 10011, Marks: marks})
		return strings.Join(names(r), ",")
	}
	// 2 Foo an iteration: in each of the 3.
	f := newPage(0)
	f.batches("Foo", 2, 1001, 4001, 8001)
	assert.Equal(t, check(3, marks, f), "objects Foo")
	assert.Equal(t, check(3, append(marks, 10000), f), "objects Foo", "a mark after the last iteration too")
	// What React kept after re-rendering a list at N=3 (measured): 26
	// members made in iteration 2, 13 in iteration 3. The bursts [26, 13]
	// pass (k=13), the marks do not.
	f = newPage(0)
	f.churn("Fiber", 26, 4001)
	f.churn("Fiber", 13, 8001)
	assert.Equal(t, check(3, nil, f), "objects Fiber")
	assert.Equal(t, check(3, marks, f), "")
	// An iteration that made none of it: no growth (React Router's 30
	// objects came from iterations [12 0 1 12 5] at N=5).
	f = newPage(0)
	f.churn("Kept", 5, 1001)
	f.churn("Kept", 4, 8001)
	assert.Equal(t, check(3, marks, f), "")
	// The marks judge instead of the bursts: 2 an iteration, the first
	// iteration's split by a jump in ids, bursts [1 1 2 2] that the burst
	// rule rejects (a burst of half an iteration's growth), as the
	// planted leak's 100 a click once read [98 2 300 100].
	f = newPage(0)
	f.batches("Foo", 1, 1001, 2501)
	f.batches("Foo", 2, 4001)
	f.batches("Foo", 2, 6001)
	assert.Equal(t, check(3, nil, f), "collection Window.store (Array)")
	assert.Equal(t, check(3, []uint32{3000, 5000}, f), "objects Foo")
	// Marks that cannot be used (a zero: no update came in time; too few)
	// leave the burst rule.
	f = newPage(0)
	f.churn("Fiber", 26, 4001)
	f.churn("Fiber", 13, 8001)
	assert.Equal(t, check(3, []uint32{3000, 0}, f), "objects Fiber")
	assert.Equal(t, check(3, []uint32{3000}, f), "objects Fiber")
}
