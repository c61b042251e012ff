package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// MarkedProcesses lists the live processes that belong to a run marked
// with env (a "NAME=value" in their environment): those that carry the
// marker — the driver, the browser, its crash handler, which leaves the
// process group — and every process in the process group of one that
// does (the browser's zygote and renderers, whose environment is
// cleaned). Other people's browsers on the machine do not count.
func MarkedProcesses(env string) map[int]string {
	want := env + "\x00"
	type proc struct {
		comm       string
		pgid       int
		marked     bool
		zombieLike bool
	}
	procs := map[int]proc{}
	groups := map[int]bool{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// "pid (comm) state ppid pgrp …": comm may hold spaces.
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 3 {
			continue
		}
		pgid, _ := strconv.Atoi(fields[2])
		environ, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		p := proc{comm: s[open+1 : end], pgid: pgid, marked: strings.Contains("\x00"+string(environ), "\x00"+want), zombieLike: fields[0] == "Z" || fields[0] == "X"}
		procs[pid] = p
		if p.marked && pid != os.Getpid() {
			groups[pid] = true
		}
	}
	out := map[int]string{}
	for pid, p := range procs {
		if p.zombieLike || pid == os.Getpid() {
			continue
		}
		if p.marked || groups[p.pgid] {
			out[pid] = p.comm
		}
	}
	return out
}
