package procgroup

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

// Group is a process wdext started, the leader of its own process group.
type Group struct {
	cmd  *exec.Cmd
	mark string // MarkerEnv's value for this group
	dir  string // the group's TMPDIR
	// exited is closed when the leader has exited, done once the rest of
	// the group is gone too.
	exited, done chan struct{}

	// mu orders signals to the group against the leader's reaping: once
	// reaped, its pid (the group id) may be given to someone else.
	mu     sync.Mutex
	reaped bool
	killed sync.Once
}

var (
	subreaper sync.Once
	groups    atomic.Int64
	// self names this wdext run in markers and directory names.
	self = sync.OnceValue(func() string {
		p, _ := stat(os.Getpid())
		return runID(p)
	})
)

func runID(p Proc) string { return fmt.Sprintf("%d.%d", p.Pid, p.Start) }

// Start starts cmd as the leader of a new process group, with the
// parent-death signal, the group's marker and a TMPDIR of its own. cmd.Env
// nil means this process's environment.
func Start(cmd *exec.Cmd) (*Group, error) {
	// Orphans of the group (a browser whose driver died) are reparented to
	// wdext rather than to PID 1, which in a container may never reap
	// them; end reaps them.
	subreaper.Do(becomeSubreaper)
	g := &Group{cmd: cmd, exited: make(chan struct{}), done: make(chan struct{})}
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
	cmd.Env = append(env, MarkerEnv+"="+g.mark, "TMPDIR="+dir)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	// The kernel sends it when the thread that started the process exits;
	// Go ends threads only of goroutines that exit locked to them, which
	// no caller of Start is.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting %s: %w", filepath.Base(cmd.Path), err)
	}
	go g.watch() // owned by the group: ends when all of it is gone
	return g, nil
}

// dirPrefix starts the name of every group's TMPDIR, followed by the
// run's id.
const dirPrefix = "wdext-"

// Pid is the leader's process id (and the group id).
func (g *Group) Pid() int { return g.cmd.Process.Pid }

// Marker is the group's MarkerEnv value.
func (g *Group) Marker() string { return g.mark }

// Dir is the group's TMPDIR, removed when the group ends.
func (g *Group) Dir() string { return g.dir }

// Exited is closed as soon as the leader has exited: what it served (a
// driver's sessions) is gone, while the rest of the group is being ended.
func (g *Group) Exited() <-chan struct{} { return g.exited }

// Done is closed when the leader has exited and the rest of the group is
// gone too.
func (g *Group) Done() <-chan struct{} { return g.done }

// Kill ends the group — SIGTERM, then SIGKILL after Grace — and returns
// once all of it is gone.
func (g *Group) Kill() {
	g.killed.Do(func() {
		g.signal(syscall.SIGTERM)
		t := time.NewTimer(Grace)
		defer t.Stop()
		select {
		case <-g.done:
		case <-t.C:
			g.signal(syscall.SIGKILL)
		}
	})
	<-g.done
}

func (g *Group) signal(sig syscall.Signal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.reaped {
		syscall.Kill(-g.Pid(), sig)
	}
}

// watch waits for the leader to exit, then ends the rest of the group.
func (g *Group) watch() {
	pid := g.Pid()
	var info unix.Siginfo
	// WNOWAIT: the leader stays a zombie, so its pid — the group id — is
	// not reused while the group is signalled.
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	close(g.exited)
	g.mu.Lock()
	syscall.Kill(-pid, syscall.SIGKILL)
	g.reaped = true
	g.mu.Unlock()
	g.cmd.Wait()
	end(func(p Proc) bool { return p.Pgid == pid || p.Getenv(MarkerEnv) == g.mark })
	os.RemoveAll(g.dir)
	close(g.done)
}

// end kills the processes that match and waits, up to reapTimeout, until
// none is left, reaping those reparented to this process (a subreaper):
// a zombie counts as left while its parent is this process or one that
// matches (whose zombies are reparented here when it is reaped).
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

// becomeSubreaper makes this process the reaper of its orphaned
// descendants (PR_SET_CHILD_SUBREAPER).
func becomeSubreaper() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }
