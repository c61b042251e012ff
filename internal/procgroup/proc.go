package procgroup

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Proc is one entry of the process table.
type Proc struct {
	Pid, PPid, Pgid int
	// State is the one-letter state of /proc/PID/stat: 'Z' for a zombie
	// (exited, not yet reaped), 'X' for one being reaped.
	State byte
	Comm  string
	// Start is the start time in clock ticks since boot: with Pid it
	// names a process that pid reuse cannot mistake for another.
	Start uint64
	// threadsLeft tells a zombie main thread whose other threads still
	// run: /proc says 'Z' for the process once its main thread has
	// exited, and a killed browser's threads were seen writing into its
	// profile after that.
	threadsLeft bool
}

// Exited reports whether the process has exited (a zombie or being
// reaped, all its threads gone): it runs nothing any more.
func (p Proc) Exited() bool { return (p.State == 'Z' || p.State == 'X') && !p.threadsLeft }

// Getenv returns the value of name in the process's environment as it
// started ("" if absent, or if the process is gone or not ours to read).
func (p Proc) Getenv(name string) string {
	environ, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.Pid), "environ"))
	if err != nil {
		return ""
	}
	prefix := []byte(name + "=")
	for _, kv := range bytes.Split(environ, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, prefix); ok {
			return string(v)
		}
	}
	return ""
}

// Cmdline returns the process's arguments ("" when gone).
func (p Proc) Cmdline() string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.Pid), "cmdline"))
	return string(bytes.ReplaceAll(bytes.TrimRight(b, "\x00"), []byte{0}, []byte{' '}))
}

// Scan reads the process table. Processes that exit while it reads are
// left out.
func Scan() []Proc {
	entries, _ := os.ReadDir("/proc")
	out := make([]Proc, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := stat(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// stat reads /proc/PID/stat: "pid (comm) state ppid pgrp …", where comm
// may hold spaces and parentheses.
func stat(pid int) (Proc, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return Proc{}, false
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return Proc{}, false
	}
	f := strings.Fields(s[end+1:])
	// f[0] is field 3 of proc(5) (state); starttime is field 22.
	if len(f) < 20 || len(f[0]) != 1 {
		return Proc{}, false
	}
	p := Proc{Pid: pid, State: f[0][0], Comm: s[open+1 : end]}
	p.PPid, _ = strconv.Atoi(f[1])
	p.Pgid, _ = strconv.Atoi(f[2])
	p.Start, _ = strconv.ParseUint(f[19], 10, 64)
	if p.State == 'Z' {
		tasks, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
		p.threadsLeft = len(tasks) > 1
	}
	return p, true
}
