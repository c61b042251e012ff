// Package procgroup starts the processes wdext owns — drivers, the X
// server, browsers — so that none outlives its owner, however the owner
// ends:
//
//   - each runs in a process group of its own, with a parent-death signal
//     (SIGKILL when wdext dies, even by SIGKILL);
//   - each carries a marker naming this wdext run in its environment,
//     which the processes it starts inherit (a browser's crash handler
//     leaves the group; the marker still names it), and a temporary
//     directory of its own as TMPDIR (where a driver puts profiles);
//   - when the leader exits, for whatever reason, the rest of the group
//     and every process with the group's marker are killed and reaped and
//     the directory is removed: a killed driver takes its browsers
//     along;
//   - Sweep, run at start-up, does the same for the groups of wdext runs
//     that no longer exist (a wdext killed by the OOM killer or a CI
//     timeout, whose browsers the parent-death signal cannot reach).
//
// Scan reads the process table (/proc) for all of this and for tests that
// count what a run left. A process is gone once every thread of it is: a
// killed process whose main thread /proc already shows as a zombie may
// still be writing with another, so its directory waits for that.
package procgroup
