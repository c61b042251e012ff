// Package turn is a lock whose waiters give up when their context ends:
// for state machines whose steps do I/O (a tracker started over CDP, say),
// so that a step holds the turn through its I/O, bounded by its own
// deadline, and nobody waits past theirs.
package turn
