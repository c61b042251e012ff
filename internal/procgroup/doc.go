// Package procgroup starts the processes wdext owns — drivers, the X
// server, browsers — so that none outlives its owner, however the owner
// ends, and none is left a zombie.
//
// Each command runs under a supervisor of its own: this binary run again
// (/proc/self/exe, caught by this package's init before main), told the
// command over a socket pair, its line to wdext. The supervisor:
//
//   - starts the command as the leader of a process group of its own,
//     with the group's marker in its environment (naming the wdext run and
//     the group; the processes it starts inherit it) and a TMPDIR of its
//     own (where a driver puts profiles);
//   - is the reaper of the whole group: its parent, a subreaper (and with
//     a PID namespace, that namespace's init), so every orphan comes to
//     it; it reaps each one as it exits. No process wdext waits
//     for through os/exec is ever reaped by anyone else, and wdext itself
//     reaps only its supervisors;
//   - when the command exits, or the line reads EOF — wdext closed it,
//     shut it down (Kill after Grace) or died, even by SIGKILL, whose
//     file descriptors the kernel closes — kills the rest of the group
//     (in a namespace, kill(-1): nothing forked meanwhile escapes; else
//     every descendant), reaps it to the last process (every thread of
//     it) and removes the TMPDIR;
//   - passes SIGTERM on to the command's group, and has no parent-death
//     signal: killed, it could not remove the TMPDIR.
//
// Rules:
//
//   - wdext signals only its supervisors, whose pids cannot be reused
//     while it has not reaped them; the supervisor signals the command's
//     group only until it has reaped the command.
//   - Containment, chosen once: process groups; with NamespaceEnv "on", a
//     PID namespace per group, else a user and PID namespace (without
//     privileges), if available. With a namespace, a supervisor killed
//     outright (the OOM killer) takes its group along: the kernel kills a
//     namespace whose init dies; but its processes read the machine's
//     /proc with their own pids. Without, the command has a parent-death
//     signal, and what it started is left to the sweep. wdext logs which
//     one is in force.
//   - Group.Pid is the command's pid as /proc shows it, outside any
//     namespace (browsers inside see their own numbering).
//   - When the supervisor is gone, wdext ends what still carries the
//     group's marker and removes the TMPDIR (a supervisor killed outright).
//   - Sweep, run at start-up, ends the processes and removes the TMPDIRs
//     of wdext runs that no longer exist (killed together with their
//     supervisors, without a namespace).
//
// Scan reads the process table (/proc) for all of this and for tests that
// count what a run left. A process is gone once every thread of it is: a
// killed process whose main thread /proc already shows as a zombie may
// still be writing with another, so its directory waits for that.
package procgroup
