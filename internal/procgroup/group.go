package procgroup

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// MarkerEnv is the environment variable that names the group a process
// belongs to: "<wdext pid>.<wdext start time>/<group number>".
const MarkerEnv = "WDEXT_OWNER"

// Grace is how long Kill lets a group end on SIGTERM before SIGKILL.
const Grace = 2 * time.Second

// reapTimeout bounds how long the end of a group waits for its processes
// to be gone after SIGKILL (a process in the kernel for long, such as one
// dumping core, is left to finish alone).
const reapTimeout = 5 * time.Second

// Group is a command wdext started, the leader of its own process group,
// with its supervisor: a process between wdext and the command (this
// binary run again) that reaps the group's processes as they exit and
// ends the group when the command exits or wdext is gone.
type Group struct {
	cmd  *exec.Cmd // the supervisor's
	pid  int       // the command's
	line *os.File  // to the supervisor: while it is open, wdext lives
	mark string    // MarkerEnv's value for this group
	dir  string    // the group's TMPDIR
	// exited is closed when the command has exited, done once the rest of
	// the group and the supervisor are gone too.
	exited, done chan struct{}

	// mu orders signals to the supervisor against its reaping: once
	// reaped, its pid may be given to someone else.
	mu     sync.Mutex
	reaped bool
	killed sync.Once
}

var (
	groups atomic.Int64
	// self names this wdext run in markers and directory names.
	self = sync.OnceValue(func() string {
		p, _ := stat(os.Getpid())
		return runID(p)
	})
)

func runID(p Proc) string { return fmt.Sprintf("%d.%d", p.Pid, p.Start) }

// Start starts the command cmd describes, under a supervisor, as the
// leader of a new process group with the group's marker and a TMPDIR of
// its own. cmd.Env nil means this process's environment. cmd itself is
// not started (its Process stays nil): the Group is the handle.
func Start(cmd *exec.Cmd) (*Group, error) {
	name := filepath.Base(cmd.Path)
	if cmd.Err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, cmd.Err)
	}
	c := contained()
	g := &Group{exited: make(chan struct{}), done: make(chan struct{})}
	n := groups.Add(1)
	g.mark = fmt.Sprintf("%s/%d", self(), n)
	// Short: a browser's sockets live beneath it, and a socket's path has
	// at most 107 bytes.
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("%s%s-%d", dirPrefix, self(), n))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	g.dir = dir
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	env = slicesDeleteVars(env, MarkerEnv, "TMPDIR")
	env = append(env, MarkerEnv+"="+g.mark, "TMPDIR="+dir)
	sp := spec{Path: cmd.Path, Args: cmd.Args, Env: env, Files: len(cmd.ExtraFiles), Dir: dir, Namespace: c != groupsOnly}

	local, remote, err := socketPair()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer remote.Close()
	g.line = local
	sup := exec.Command("/proc/self/exe")
	sup.Args = []string{supervisorName, name}
	// Its own environment holds only the line: the command's is in the
	// spec, and the supervisor is no process of the command's.
	sup.Env = []string{superviseEnv + "=" + strconv.Itoa(3+len(cmd.ExtraFiles))}
	sup.Dir = cmd.Dir
	sup.Stdin, sup.Stdout, sup.Stderr = cmd.Stdin, cmd.Stdout, cmd.Stderr
	sup.ExtraFiles = append(slices.Clip(cmd.ExtraFiles), remote)
	sup.WaitDelay = cmd.WaitDelay
	// No parent-death signal: the line's end tells the supervisor that
	// wdext is gone, and a supervisor killed could not clean up.
	sup.SysProcAttr = c.attr()
	if err := sup.Start(); err != nil {
		local.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	g.cmd = sup
	fail := func(err error) (*Group, error) {
		local.Close()
		sup.Process.Kill()
		sup.Wait()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	b, _ := json.Marshal(sp)
	if _, err := local.Write(append(b, '\n')); err != nil {
		return fail(err)
	}
	in := bufio.NewReader(local)
	reply, err := in.ReadString('\n')
	if err != nil {
		return fail(fmt.Errorf("its supervisor exited: %v", err))
	}
	word, rest, _ := strings.Cut(strings.TrimSpace(reply), " ")
	switch word {
	case "started":
		g.pid, _ = strconv.Atoi(rest)
	case "error":
		code, msg, _ := strings.Cut(rest, " ")
		if errno, _ := strconv.Atoi(code); errno != 0 {
			return fail(&os.PathError{Op: "fork/exec", Path: cmd.Path, Err: syscall.Errno(errno)})
		}
		return fail(errors.New(msg))
	default:
		return fail(fmt.Errorf("its supervisor said %q", reply))
	}
	go g.watch(in) // owned by the group: ends when all of it is gone
	return g, nil
}

// socketPair returns the two ends of a line: wdext's (non-blocking, so
// that closing it ends a read) and the supervisor's.
func socketPair() (local, remote *os.File, err error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	syscall.SetNonblock(fds[0], true)
	return os.NewFile(uintptr(fds[0]), "supervisor"), os.NewFile(uintptr(fds[1]), "wdext"), nil
}

// dirPrefix starts the name of every group's TMPDIR, followed by the
// run's id.
const dirPrefix = "wdext-"

// Pid is the command's process id (and its process group's id), 0 if it
// exited before it could be seen.
func (g *Group) Pid() int { return g.pid }

// Marker is the group's MarkerEnv value.
func (g *Group) Marker() string { return g.mark }

// Dir is the group's TMPDIR, removed when the group ends.
func (g *Group) Dir() string { return g.dir }

// Exited is closed as soon as the command has exited: what it served (a
// driver's sessions) is gone, while the rest of the group is being ended.
func (g *Group) Exited() <-chan struct{} { return g.exited }

// Done is closed when the command has exited and the rest of the group is
// gone too.
func (g *Group) Done() <-chan struct{} { return g.done }

// Kill ends the group — SIGTERM to the command's process group; after
// Grace, SIGKILL to all of it — and returns once all of it is gone.
func (g *Group) Kill() {
	g.killed.Do(func() {
		g.signal(syscall.SIGTERM) // the supervisor passes it on
		t := time.NewTimer(Grace)
		defer t.Stop()
		select {
		case <-g.done:
			return
		case <-t.C:
		}
		g.hangUp()
		t.Reset(reapTimeout)
		select {
		case <-g.done:
		case <-t.C:
			g.signal(syscall.SIGKILL) // a supervisor that does not answer
		}
	})
	<-g.done
}

// signal signals the supervisor.
func (g *Group) signal(sig syscall.Signal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.reaped {
		g.cmd.Process.Signal(sig)
	}
}

// hangUp tells the supervisor to end the group at once, as if wdext were
// gone: it reads the end of its line.
func (g *Group) hangUp() {
	if rc, err := g.line.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { syscall.Shutdown(int(fd), syscall.SHUT_WR) })
	}
}

// watch waits for the command to exit (the supervisor says so, or its
// line ends), then for the supervisor, which ends the rest of the group.
func (g *Group) watch(in *bufio.Reader) {
	for {
		l, err := in.ReadString('\n')
		if err != nil || strings.HasPrefix(l, "exited") {
			break
		}
	}
	close(g.exited)
	var info unix.Siginfo
	// WNOWAIT: the supervisor stays a zombie, so its pid is not reused
	// while Kill may signal it.
	for {
		err := unix.Waitid(unix.P_PID, g.cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	g.mu.Lock()
	g.reaped = true
	g.mu.Unlock()
	g.cmd.Wait()
	g.line.Close()
	// A supervisor killed outright leaves processes that carry the marker
	// (outside a namespace): end them here.
	end(func(p Proc) bool { return p.Getenv(MarkerEnv) == g.mark })
	os.RemoveAll(g.dir)
	close(g.done)
}

// end kills the processes that match and waits, up to reapTimeout, until
// none is left, reaping those that are this process's children (orphans
// come to it when it is a namespace's init, e.g. wdext as a container's
// PID 1): a zombie counts as left while its parent is this process or one
// that matches (whose zombies are reparented when it is reaped).
func end(match func(Proc) bool) (killed int) {
	deadline := time.Now().Add(reapTimeout)
	seen := map[int]bool{}
	me := os.Getpid()
	for {
		procs := Scan()
		matched := map[int]bool{}
		for _, p := range procs {
			if p.Pid != me && match(p) {
				matched[p.Pid] = true
			}
		}
		left := 0
		for _, p := range procs {
			switch {
			case !matched[p.Pid]:
			case p.Exited() && p.PPid == me:
				var ws syscall.WaitStatus
				syscall.Wait4(p.Pid, &ws, syscall.WNOHANG, nil)
				left++
			case p.Exited():
				if matched[p.PPid] {
					left++ // to be reparented here
				}
			default:
				left++
				if !seen[p.Pid] {
					seen[p.Pid] = true
					killed++
				}
				syscall.Kill(p.Pid, syscall.SIGKILL)
			}
		}
		if left == 0 || time.Now().After(deadline) {
			return killed
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// slicesDeleteVars returns env without the variables named.
func slicesDeleteVars(env []string, names ...string) []string {
	out := make([]string, 0, len(env)+len(names))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, n := range names {
			if name == n {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}
