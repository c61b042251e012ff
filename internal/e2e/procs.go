package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wdext/wdext/internal/procgroup"
)

// MarkedProcesses lists the live processes that belong to a run marked
// with env (a "NAME=value" in their environment): those that carry the
// marker — the driver, the browser, its crash handler, which leaves the
// process group — and every process in the process group of one that
// does (the browser's zygote and renderers, whose environment is
// cleaned). Other people's browsers on the machine do not count.
func MarkedProcesses(env string) map[int]string {
	name, value, _ := strings.Cut(env, "=")
	procs := procgroup.Scan()
	groups := map[int]bool{}
	marked := map[int]bool{}
	for _, p := range procs {
		if p.Pid != os.Getpid() && p.Getenv(name) == value {
			marked[p.Pid], groups[p.Pid] = true, true
		}
	}
	out := map[int]string{}
	for _, p := range procs {
		if !p.Exited() && p.Pid != os.Getpid() && (marked[p.Pid] || groups[p.Pgid]) {
			out[p.Pid] = p.Comm
		}
	}
	return out
}

// Zombies lists the zombies below process root: those whose parent is
// root or a live descendant of it (a driver's supervisor, a driver, a
// browser), that is, zombies only root's side of the tree would reap.
func Zombies(root int) []int {
	procs := procgroup.Scan()
	parent := map[int]int{}
	for _, p := range procs {
		parent[p.Pid] = p.PPid
	}
	below := func(pid int) bool {
		for seen := 0; pid > 1 && seen < len(procs); seen++ {
			if pid == root {
				return true
			}
			pid = parent[pid]
		}
		return false
	}
	var out []int
	for _, p := range procs {
		if p.State == 'Z' && below(p.PPid) {
			out = append(out, p.Pid)
		}
	}
	return out
}

// WaitGone waits up to ~5 s (reaping takes a moment) for the processes
// marked with mark (see MarkedProcesses) to be gone, and fails the test
// with what is left.
func WaitGone(t testing.TB, mark string) {
	t.Helper()
	left := MarkedProcesses(mark)
	for i := 0; i < 250 && len(left) > 0; i++ {
		time.Sleep(20 * time.Millisecond)
		left = MarkedProcesses(mark)
	}
	if len(left) > 0 {
		t.Fatalf("processes left behind: %v", left)
	}
}
