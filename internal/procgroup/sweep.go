package procgroup

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Sweep ends what wdext runs that no longer exist left behind: every
// process carrying the marker of a dead run and the rest of its process
// group, and the TMPDIRs of those runs. It reports how many processes and
// directories it removed.
func Sweep() (procs, dirs int) {
	dead := map[string]bool{}
	isDead := func(run string) bool {
		d, known := dead[run]
		if !known {
			d = !alive(run)
			dead[run] = d
		}
		return d
	}
	leaders := map[int]bool{}
	for _, p := range Scan() {
		mark := p.Getenv(MarkerEnv)
		run, _, ok := strings.Cut(mark, "/")
		if ok && run != self() && isDead(run) {
			leaders[p.Pid] = true
		}
	}
	if len(leaders) > 0 {
		procs = end(func(p Proc) bool { return leaders[p.Pid] || leaders[p.Pgid] })
	}
	entries, _ := os.ReadDir(os.TempDir())
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), dirPrefix)
		run, _, ok2 := strings.Cut(rest, "-")
		if !ok || !ok2 || !e.IsDir() || run == self() || !isDead(run) {
			continue
		}
		if os.RemoveAll(filepath.Join(os.TempDir(), e.Name())) == nil {
			dirs++
		}
	}
	return procs, dirs
}

// alive reports whether run ("pid.start") names a process that exists.
func alive(run string) bool {
	pidText, startText, ok := strings.Cut(run, ".")
	pid, err1 := strconv.Atoi(pidText)
	start, err2 := strconv.ParseUint(startText, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		// Not one of ours: leave it alone.
		return true
	}
	p, ok := stat(pid)
	return ok && p.Start == start && !p.Exited()
}
