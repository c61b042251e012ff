package webkitgtk

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// becomeSubreaper makes this process the reaper of its orphaned
// descendants: MiniBrowser outlives a killed WebKitWebDriver for a moment
// and would otherwise become a zombie of PID 1 (which, in a container, may
// never reap it).
func becomeSubreaper() {
	const prSetChildSubreaper = 36
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// reapGroup reaps the processes of the (killed) group pg as they become
// this process's children — orphans are reparented here one generation
// at a time — until none of the group is left, for up to 2 s.
func reapGroup(pg int) {
	deadline := time.Now().Add(2 * time.Second)
	for {
		members, mine := groupMembers(pg)
		for _, pid := range mine {
			var ws syscall.WaitStatus
			syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		}
		if members == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// groupMembers counts the processes of group pg (zombies included) and
// lists those that are this process's children.
func groupMembers(pg int) (members int, mine []int) {
	self := os.Getpid()
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
		s := string(stat)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgid, _ := strconv.Atoi(f[2])
		if pgid != pg {
			continue
		}
		members++
		if ppid == self {
			mine = append(mine, pid)
		}
	}
	return members, mine
}
