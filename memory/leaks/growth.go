package leaks

import "slices"

// growth decides whether a group of new objects grew with the
// iterations, and by how much each.
//
// fuite's rule first: the group has k·N members, k ≥ 1. Then, when the
// allocation clock resolves the iterations (Input.Clock), the members
// must have been made across them, not in one stretch: sorted by heap
// object id (the order DevTools gave them ids as they were made, in
// updates about every 50 ms), they fall in bursts, split where the ids
// jump by a quarter of an iteration's share of the check's ids or more.
// A growth of k each iteration makes a burst an iteration, of k members
// (see grewEachIteration).
// A structure the page makes anew at each iteration, of a constant
// size, survives only in its last copy: one burst, at the end, of all
// the members but a few strays; it is churn, not growth, whatever N.
// A group that both grows and churns (k new a round kept, and a copy of
// S made anew) has k·N + S members, which fuite's rule rejects unless N
// divides S, and then the last burst, k + S, is too big: it is not
// reported (nor at N that do not divide S). With the client's iteration
// marks (Input.Marks), which tell exactly when each member was made,
// grewMarked judges instead of the bursts.
func (c *comparison) growth(members []int) (perIteration int64, ok bool) {
	count := int64(len(members))
	if !c.grows(count) {
		return 0, false
	}
	k := count / int64(c.n)
	if marks := c.marks(); marks != nil {
		return k, c.grewMarked(members, marks, k)
	}
	start, stop := c.in.Baseline.maxID, c.in.Clock
	if stop == 0 || c.n < 2 || stop <= start {
		return k, true
	}
	ids := make([]uint32, len(members))
	for i, m := range members {
		ids[i] = min(c.f.ID(m), stop) // made at the very end: in the last burst
	}
	slices.Sort(ids)
	gap := max((stop-start)/uint32(4*c.n), 1)
	var bursts []int64 // their sizes
	size := int64(1)
	for i := 1; i < len(ids); i++ {
		if ids[i]-ids[i-1] >= gap {
			bursts, size = append(bursts, size), 0
		}
		size++
	}
	bursts = append(bursts, size)
	return k, grewEachIteration(bursts, k)
}

// grewEachIteration tells whether bursts of these sizes are a growth of
// k an iteration: at least 2 bursts (adjacent
// iterations may share an update and merge), each but the last a whole
// number of iterations' growth, the last one or two iterations' (no
// bigger than 2k) and no bigger than two of the others on average.
func grewEachIteration(bursts []int64, k int64) bool {
	b := len(bursts)
	if b < 2 {
		return false
	}
	var early int64
	for _, size := range bursts[:b-1] {
		if size%k != 0 {
			return false
		}
		early += size
	}
	last := bursts[b-1]
	return last <= 2*k && last*int64(b-1) <= 2*early
}

// marks are Input.Marks when they tell every iteration apart: one for
// each iteration but the last, none zero, rising; else nil.
func (c *comparison) marks() []uint32 {
	m := c.in.Marks
	if len(m) == c.n {
		m = m[:c.n-1]
	}
	if c.n < 2 || len(m) != c.n-1 {
		return nil
	}
	prev := c.in.Baseline.maxID
	for _, id := range m {
		if id == 0 || id < prev {
			return nil
		}
		prev = id
	}
	return m
}

// grewMarked tells, from the iteration each member was made in (by its
// id, against marks), whether the group grew at each iteration: every
// iteration made some of it, and the last no more than two iterations'
// share (2k). A structure the page makes anew, of which the last copies
// survive (a framework keeps the current and the previous render), was
// made in the last iterations alone; a growth began with the first and
// went on. Measured on a React 18 app (docs/leaks.md, "Iteration marks"):
// React's two kept copies have none from the first of 3 iterations; a
// group of 30 objects React Router keeps after navigating, at N=5, came
// from iterations [12 0 1 12 5]; the planted leak's 500 from [100 100 100
// 100 100] every time, while its bursts once read [98 2 300 100], which
// the burst rule rejects.
func (c *comparison) grewMarked(members []int, marks []uint32, k int64) bool {
	per := c.madeIn(members, marks)
	return !slices.Contains(per, 0) && per[len(per)-1] <= 2*k
}

// madeIn counts the members made in each iteration, by their ids
// against marks.
func (c *comparison) madeIn(members []int, marks []uint32) []int64 {
	per := make([]int64, len(marks)+1)
	for _, m := range members {
		i, _ := slices.BinarySearch(marks, c.f.ID(m))
		per[i]++
	}
	return per
}
