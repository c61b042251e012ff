package procgroup

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// TestMain lets the test binary play a wdext that starts a group and is
// then killed (see TestKilledParentLeavesNothing).
func TestMain(m *testing.M) {
	if os.Getenv("PROCGROUP_TEST_PARENT") != "" {
		g, err := Start(exec.Command("sh", "-c", familyScript))
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(g.cmd.Process.Pid, g.Marker(), g.Dir())
		select {}
	}
	os.Exit(m.Run())
}

// familyScript is a leader with a child in its group, one that left it
// (setsid, as a browser's crash handler does) and a file in its TMPDIR.
const familyScript = `sleep 60 & setsid sleep 60 & echo x > "$TMPDIR/profile"; wait`

// eachContainment runs f under each containment this machine has: the
// one in force, and process groups alone.
func eachContainment(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	cs := []containment{groupsOnly}
	if c := available(); c != groupsOnly {
		cs = append([]containment{c}, cs...)
	}
	for _, c := range cs {
		t.Run(strings.Fields(c.String())[0], func(t *testing.T) {
			old := contained
			contained = func() containment { return c }
			t.Cleanup(func() { contained = old })
			f(t)
		})
	}
}

// family starts familyScript's group and reports its live processes (as
// this process sees them): the leader and its two sleeps.
func family(t *testing.T) (*Group, []int) {
	t.Helper()
	g, err := Start(exec.Command("sh", "-c", familyScript))
	assert.NilError(t, err)
	t.Cleanup(g.Kill)
	var pids []int
	for deadline := time.Now().Add(10 * time.Second); len(pids) < 3; pids = marked(g.Marker()) {
		assert.Assert(t, time.Now().Before(deadline), "the family did not start: %v", pids)
		time.Sleep(10 * time.Millisecond)
	}
	assert.Assert(t, slices.Contains(pids, g.Pid()), "leader %d not among %v", g.Pid(), pids)
	return g, pids
}

func running(pid int) bool {
	p, ok := stat(pid)
	return ok && !p.Exited()
}

func waitDone(t *testing.T, g *Group) {
	t.Helper()
	select {
	case <-g.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("group not done 10 s after its leader died")
	}
}

// A leader killed from outside takes its group along, and the process
// that left the group but carries its marker.
func TestLeaderDeathEndsGroup(t *testing.T) {
	eachContainment(t, func(t *testing.T) {
		g, pids := family(t)
		assert.NilError(t, syscall.Kill(g.Pid(), syscall.SIGKILL))
		waitDone(t, g)
		for _, pid := range pids {
			assert.Assert(t, !running(pid), "pid %d still running", pid)
		}
		_, err := os.Stat(g.Dir())
		assert.Assert(t, os.IsNotExist(err), "TMPDIR %s left", g.Dir())
	})
}

func TestKillEndsGroup(t *testing.T) {
	eachContainment(t, func(t *testing.T) {
		g, pids := family(t)
		g.Kill()
		for _, pid := range pids {
			assert.Assert(t, !running(pid), "pid %d still running", pid)
		}
		_, err := os.Stat(g.Dir())
		assert.Assert(t, os.IsNotExist(err))
	})
}

// A command that cannot be run fails Start, as exec.Cmd.Start would.
func TestStartError(t *testing.T) {
	eachContainment(t, func(t *testing.T) {
		_, err := Start(exec.Command("/nonexistent/driver"))
		assert.ErrorIs(t, err, fs.ErrNotExist)
		dir := t.TempDir()
		cmd := exec.Command(dir) // a directory
		_, err = Start(cmd)
		assert.ErrorIs(t, err, syscall.EACCES)
	})
}

// The processes a group's command leaves behind are reaped as they exit,
// not when the group ends: over many orphans, at most one zombie is left
// at a time (issue 28: 84 sessions left 860 zombie browsers).
func TestOrphansAreReapedAsTheyExit(t *testing.T) {
	eachContainment(t, func(t *testing.T) {
		// Each inner sh exits at once; its sleep, an orphan, exits soon
		// after.
		cmd := exec.Command("sh", "-c", `for i in $(seq 30); do sh -c 'sleep 0.01 &'; done; echo done; exec sleep 60`)
		out, err := cmd.StdoutPipe()
		assert.NilError(t, err)
		g, err := Start(cmd)
		assert.NilError(t, err)
		t.Cleanup(g.Kill)
		sc := bufio.NewScanner(out)
		assert.Assert(t, sc.Scan())
		// The orphans have all been started; they exit within moments.
		left := settleZombies(g)
		assert.Assert(t, len(left) <= 1, "zombies held: %v", left)
		g.Kill()
		assert.DeepEqual(t, zombies(g), []int(nil))
	})
}

// settleZombies waits, up to 10 s, until at most one zombie of g is left,
// and returns them.
func settleZombies(g *Group) []int {
	z := zombies(g)
	for deadline := time.Now().Add(10 * time.Second); len(z) > 1 && time.Now().Before(deadline); z = zombies(g) {
		time.Sleep(20 * time.Millisecond)
	}
	return z
}

// zombies lists the zombies whose parent is this process, g's supervisor
// or a process of g: those no one but wdext's side would reap.
func zombies(g *Group) []int {
	procs := Scan()
	parents := map[int]bool{os.Getpid(): true, g.cmd.Process.Pid: true}
	for _, p := range procs {
		if p.Pgid == g.Pid() || p.Getenv(MarkerEnv) == g.Marker() {
			parents[p.Pid] = true
		}
	}
	var out []int
	for _, p := range procs {
		if p.State == 'Z' && parents[p.PPid] && p.Pid != g.cmd.Process.Pid {
			out = append(out, p.Pid)
		}
	}
	return out
}

// killedParent is a wdext (this test binary, see TestMain) that has
// started familyScript's group, and what the test learnt of it.
type killedParent struct {
	cmd        *exec.Cmd
	supervisor int
	mark, dir  string
	pids       []int // the family
}

// startParent starts a killedParent under the containment in force and
// waits for its family to start.
func startParent(t *testing.T) *killedParent {
	t.Helper()
	p := &killedParent{cmd: exec.Command(os.Args[0], "-test.run=^$")}
	p.cmd.Env = append(os.Environ(), "PROCGROUP_TEST_PARENT=1")
	if contained() == groupsOnly {
		p.cmd.Env = append(p.cmd.Env, NamespaceEnv+"=off")
	} else {
		p.cmd.Env = append(p.cmd.Env, NamespaceEnv+"=on")
	}
	out, err := p.cmd.StdoutPipe()
	assert.NilError(t, err)
	assert.NilError(t, p.cmd.Start())
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	sc := bufio.NewScanner(out)
	assert.Assert(t, sc.Scan())
	_, err = fmt.Sscan(sc.Text(), &p.supervisor, &p.mark, &p.dir)
	assert.NilError(t, err, "%s", sc.Text())
	for deadline := time.Now().Add(10 * time.Second); len(p.pids) < 3; p.pids = marked(p.mark) {
		assert.Assert(t, time.Now().Before(deadline), "the family did not start: %v", p.pids)
		time.Sleep(10 * time.Millisecond)
	}
	t.Cleanup(func() {
		for _, pid := range p.pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		os.RemoveAll(p.dir)
	})
	for _, err := os.Stat(filepath.Join(p.dir, "profile")); err != nil; _, err = os.Stat(filepath.Join(p.dir, "profile")) {
		time.Sleep(10 * time.Millisecond)
	}
	return p
}

// waitFor polls ok for up to 10 s.
func waitFor(ok func() bool) {
	for deadline := time.Now().Add(10 * time.Second); !ok() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
}

// A wdext killed by SIGKILL leaves nothing of its groups: no process, not
// the one that left the group, and no TMPDIR — without a next wdext to
// sweep (issue 28: its browsers lived on until another wdext started).
func TestKilledParentLeavesNothing(t *testing.T) {
	eachContainment(t, func(t *testing.T) {
		p := startParent(t)
		p.cmd.Process.Kill()
		p.cmd.Wait()
		waitFor(func() bool {
			_, err := os.Stat(p.dir)
			return len(marked(p.mark)) == 0 && !running(p.supervisor) && os.IsNotExist(err)
		})
		_, err := os.Stat(p.dir)
		assert.Assert(t, os.IsNotExist(err), "TMPDIR %s left", p.dir)
		assert.DeepEqual(t, marked(p.mark), []int(nil))
		assert.Assert(t, !running(p.supervisor), "supervisor %d left", p.supervisor)
	})
}

// In a PID namespace, the kernel ends the group even when wdext and the
// supervisor are killed outright together (the OOM killer, a cgroup's
// end), neither seeing the other die; the TMPDIR is then left to the next
// wdext's Sweep.
func TestKilledWithSupervisorEndsNamespace(t *testing.T) {
	if available() == groupsOnly {
		t.Skip("no PID namespace here")
	}
	old := contained
	contained = available
	t.Cleanup(func() { contained = old })
	p := startParent(t)
	assert.NilError(t, p.cmd.Process.Signal(syscall.SIGSTOP))
	assert.NilError(t, syscall.Kill(p.supervisor, syscall.SIGSTOP))
	assert.NilError(t, syscall.Kill(p.supervisor, syscall.SIGKILL))
	p.cmd.Process.Kill()
	p.cmd.Wait()
	waitFor(func() bool { return len(marked(p.mark)) == 0 })
	assert.DeepEqual(t, marked(p.mark), []int(nil))
}

// deadRun returns the run id of a process that has exited.
func deadRun(t *testing.T) string {
	cmd := exec.Command("sleep", "60")
	assert.NilError(t, cmd.Start())
	p, ok := stat(cmd.Process.Pid)
	assert.Assert(t, ok)
	cmd.Process.Kill()
	cmd.Wait()
	return runID(p)
}

// What a killed wdext left — a marked group, a marked process outside
// it, their TMPDIR — a later run sweeps; a live run's are left alone.
func TestSweep(t *testing.T) {
	run := deadRun(t)
	orphan := exec.Command("sh", "-c", `sleep 60 & setsid sleep 60 & wait`)
	orphan.Env = append(os.Environ(), MarkerEnv+"="+run+"/1")
	orphan.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	assert.NilError(t, orphan.Start())
	t.Cleanup(func() { syscall.Kill(-orphan.Process.Pid, syscall.SIGKILL) })
	go orphan.Wait()
	dir, err := os.MkdirTemp("", dirPrefix+run+"-")
	assert.NilError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	live, livePids := family(t)

	var left []int
	deadline := time.Now().Add(5 * time.Second)
	for len(left) < 3 && time.Now().Before(deadline) { // the shell's children start
		left = marked(run + "/")
		time.Sleep(10 * time.Millisecond)
	}
	assert.Equal(t, len(left), 3, "marked processes of the dead run: %v", left)

	procs, dirs := Sweep()
	assert.Assert(t, procs >= 3, "swept %d processes", procs)
	assert.Assert(t, dirs >= 1)
	assert.DeepEqual(t, marked(run+"/"), []int(nil))
	_, err = os.Stat(dir)
	assert.Assert(t, os.IsNotExist(err))
	for _, pid := range livePids {
		assert.Assert(t, running(pid), "a live run's pid %d was swept", pid)
	}
	_, err = os.Stat(live.Dir())
	assert.NilError(t, err)
}

// marked lists the live processes whose marker starts with prefix (a
// group's marker, or a run's id and "/").
func marked(prefix string) []int {
	var out []int
	for _, p := range Scan() {
		if !p.Exited() && strings.HasPrefix(p.Getenv(MarkerEnv), prefix) {
			out = append(out, p.Pid)
		}
	}
	return out
}

// A process whose main thread has exited is not done while another of its
// threads runs: /proc says 'Z' for it all the same (a killed Chromium's
// threads wrote into its profile then, after the sweep had removed it).
func TestExitedWaitsForEveryThread(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3, to end a main thread alone (SYS_exit)")
	}
	// The main thread exits by itself; a second one runs until stdin closes.
	cmd := exec.Command(python, "-c", fmt.Sprintf(`
import ctypes, sys, threading
threading.Thread(target=sys.stdin.read).start()
ctypes.CDLL(None).syscall(%d, 0)
`, syscall.SYS_EXIT))
	stdin, err := cmd.StdinPipe()
	assert.NilError(t, err)
	assert.NilError(t, cmd.Start())
	defer cmd.Process.Kill()
	pid := cmd.Process.Pid
	var p Proc
	deadline := time.Now().Add(10 * time.Second)
	for p, _ = stat(pid); p.State != 'Z'; p, _ = stat(pid) {
		assert.Assert(t, time.Now().Before(deadline), "main thread still running: %c", p.State)
		time.Sleep(10 * time.Millisecond)
	}
	assert.Check(t, !p.Exited(), "a thread still runs")
	stdin.Close()
	for p, _ = stat(pid); !p.Exited(); p, _ = stat(pid) {
		assert.Assert(t, time.Now().Before(deadline), "the second thread did not end")
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Wait()
}
