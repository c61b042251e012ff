package procgroup

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// superviseEnv, in the environment of the wdext binary run again
// (/proc/self/exe), makes it a group's supervisor: its value is the file
// descriptor of the supervisor's end of its line to wdext, or "probe".
const superviseEnv = "WDEXT_PROCGROUP_SUPERVISOR"

// supervisorName is a supervisor's name in the process table (comm: 15
// bytes at most).
const supervisorName = "wdext-supervise"

// The supervisor runs before main, in whatever binary imports procgroup
// (wdext, a test binary).
func init() {
	if v, ok := os.LookupEnv(superviseEnv); ok {
		os.Exit(supervise(v))
	}
}

// spec is what wdext sends a supervisor over the line: the command to
// run.
type spec struct {
	Path  string
	Args  []string
	Env   []string
	Files int    // extra files passed on as they are (fds 3…3+Files-1)
	Dir   string // the group's TMPDIR, removed once all of it is gone
	// Namespace: the supervisor is the init of a PID namespace of its own.
	Namespace bool
}

// supervise is a supervisor's life: read the spec, start the command,
// reap every process of the group as it exits (orphans come to the
// supervisor, a subreaper or its namespace's init), and when the command
// exits or wdext is gone (the line reads EOF: wdext closed it, or died),
// kill the rest, reap it, remove the TMPDIR and exit.
func supervise(v string) int {
	if v == "probe" {
		return 0
	}
	// What ps and /proc/PID/comm show, rather than "exe".
	unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&[]byte(supervisorName + "\x00")[0])), 0, 0, 0)
	fd, err := strconv.Atoi(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s=%q: not a file descriptor\n", superviseEnv, v)
		return 2
	}
	syscall.CloseOnExec(fd)
	unix.SetNonblock(fd, true)
	line := os.NewFile(uintptr(fd), "wdext")
	in := bufio.NewReader(line)
	var sp spec
	b, err := in.ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(b, &sp)
	}
	if err != nil {
		fmt.Fprintf(line, "error 0 reading the command: %v\n", err)
		return 2
	}
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	s := &supervisor{namespace: sp.Namespace, hangUp: make(chan struct{})}
	// Before the command starts: a SIGTERM for the group must not end
	// the supervisor (Go's default) but be passed on, and no SIGCHLD may
	// be missed.
	s.chld = make(chan os.Signal, 1)
	signal.Notify(s.chld, syscall.SIGCHLD)
	s.term = make(chan os.Signal, 4)
	signal.Notify(s.term, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	files := []uintptr{0, 1, 2}
	for i := range sp.Files {
		files = append(files, uintptr(3+i))
	}
	pid, err := syscall.ForkExec(sp.Path, sp.Args, &syscall.ProcAttr{
		Env: sp.Env, Files: files,
		// The command leads a process group of its own, which the
		// supervisor signals; should the supervisor die, so does it.
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		var errno syscall.Errno
		errors.As(err, &errno)
		fmt.Fprintf(line, "error %d %s\n", int(errno), strings.ReplaceAll(err.Error(), "\n", " "))
		return 1
	}
	s.child = pid
	fmt.Fprintf(line, "started %d\n", s.seenPid(pid))
	go func() { // owned by the supervisor: ends when the line does
		io.Copy(io.Discard, in)
		close(s.hangUp)
	}()
	ws := s.run()
	fmt.Fprintf(line, "exited %d\n", int(ws))
	if s.endAll() {
		os.RemoveAll(sp.Dir)
	}
	switch {
	case ws.Exited():
		return ws.ExitStatus()
	case ws.Signaled():
		return 128 + int(ws.Signal())
	}
	return 1
}

// supervisor is a supervisor's state. One goroutine, run's, reaps and
// signals: a pid it signals cannot have been reaped, and so reused,
// meanwhile.
type supervisor struct {
	child     int
	namespace bool
	chld      chan os.Signal // SIGCHLD: a process to reap
	term      chan os.Signal // to pass on to the command's group
	hangUp    chan struct{}  // closed when the line ends: end at once
}

// run reaps every process that comes to the supervisor as it exits,
// passes signals on to the command's group, and ends the command when
// the line ends, until the command has exited; it returns its status.
func (s *supervisor) run() syscall.WaitStatus {
	hangUp := s.hangUp
	for {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid == s.child {
				return ws
			}
			if pid <= 0 && !errors.Is(err, syscall.EINTR) {
				break // none to reap now
			}
		}
		select {
		case <-s.chld:
		case sig := <-s.term:
			syscall.Kill(-s.child, sig.(syscall.Signal))
		case <-hangUp:
			syscall.Kill(-s.child, syscall.SIGKILL)
			hangUp = nil
		}
	}
}

// endAll kills what is left of the group and reaps it, for up to
// reapTimeout; it reports whether all of it is gone (every thread of every
// process: a zombie is reaped only then).
func (s *supervisor) endAll() bool {
	deadline := time.Now().Add(reapTimeout)
	for {
		s.killAll()
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if errors.Is(err, syscall.ECHILD) {
				return true
			}
			if pid <= 0 && !errors.Is(err, syscall.EINTR) {
				break
			}
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killAll sends SIGKILL to every process of the group: in a namespace,
// every process in it but its init (the kernel does not let a process
// escape: those that fork meanwhile die too); else every descendant of the
// supervisor (a subreaper: the orphans among them are its children).
func (s *supervisor) killAll() {
	if s.namespace {
		syscall.Kill(-1, syscall.SIGKILL)
		return
	}
	children := map[int][]Proc{}
	for _, p := range Scan() {
		children[p.PPid] = append(children[p.PPid], p)
	}
	next := children[os.Getpid()]
	for len(next) > 0 {
		p := next[len(next)-1]
		next = append(next[:len(next)-1], children[p.Pid]...)
		kill(p)
	}
}

// seenPid is the command's pid as wdext sees it. In a namespace the
// command is pid 2 there, and its pid outside is what /proc, mounted
// outside, lists among the supervisor's children.
func (s *supervisor) seenPid(pid int) int {
	if !s.namespace {
		return pid
	}
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(b)) {
			if outside, err := strconv.Atoi(f); err == nil && nsPid(outside) == pid {
				return outside
			}
		}
	}
	return 0
}

// nsPid is the pid of process pid in its innermost PID namespace (the
// last NSpid of /proc/PID/status), or 0.
func nsPid(pid int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "NSpid:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.Atoi(f[len(f)-1])
				return n
			}
		}
	}
	return 0
}

// kill sends SIGKILL to p if it is still the process Scan saw: pinned by a
// pidfd (os.FindProcess) and checked after, so that a pid reused
// meanwhile (p reaped by its parent) is never signalled.
func kill(p Proc) {
	h, err := os.FindProcess(p.Pid)
	if err != nil {
		return
	}
	defer h.Release()
	if q, ok := stat(p.Pid); ok && q.Start == p.Start {
		h.Signal(syscall.SIGKILL)
	}
}
