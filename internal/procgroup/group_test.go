package procgroup

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// TestMain lets the test binary play a wdext that starts a group and is
// then killed (see TestParentDeathKillsLeader).
func TestMain(m *testing.M) {
	if os.Getenv("PROCGROUP_TEST_PARENT") != "" {
		g, err := Start(exec.Command("sleep", "60"))
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(g.Pid())
		select {}
	}
	os.Exit(m.Run())
}

// family starts a shell leader with a child in its group and one that left
// it (setsid, as a browser's crash handler does), and reports their pids.
func family(t *testing.T) (*Group, []int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `sleep 60 & echo $!; setsid sleep 60 & echo $!; echo "$TMPDIR"; wait`)
	out, err := cmd.StdoutPipe()
	assert.NilError(t, err)
	g, err := Start(cmd)
	assert.NilError(t, err)
	t.Cleanup(g.Kill)
	sc := bufio.NewScanner(out)
	var pids []int
	for len(pids) < 2 && sc.Scan() {
		pid, err := strconv.Atoi(sc.Text())
		assert.NilError(t, err)
		pids = append(pids, pid)
	}
	assert.Assert(t, sc.Scan())
	assert.Equal(t, sc.Text(), g.Dir())
	return g, append(pids, g.Pid())
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
	g, pids := family(t)
	assert.NilError(t, syscall.Kill(g.Pid(), syscall.SIGKILL))
	waitDone(t, g)
	for _, pid := range pids {
		assert.Assert(t, !running(pid), "pid %d still running", pid)
	}
	_, err := os.Stat(g.Dir())
	assert.Assert(t, os.IsNotExist(err), "TMPDIR %s left", g.Dir())
}

func TestKillEndsGroup(t *testing.T) {
	g, pids := family(t)
	g.Kill()
	for _, pid := range pids {
		assert.Assert(t, !running(pid), "pid %d still running", pid)
	}
	_, err := os.Stat(g.Dir())
	assert.Assert(t, os.IsNotExist(err))
}

// The parent-death signal: a wdext killed by SIGKILL takes its leaders.
func TestParentDeathKillsLeader(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), "PROCGROUP_TEST_PARENT=1")
	out, err := parent.StdoutPipe()
	assert.NilError(t, err)
	assert.NilError(t, parent.Start())
	t.Cleanup(func() { parent.Process.Kill(); parent.Wait() })
	sc := bufio.NewScanner(out)
	assert.Assert(t, sc.Scan())
	leader, err := strconv.Atoi(sc.Text())
	assert.NilError(t, err, "%s", sc.Text())
	t.Cleanup(func() { syscall.Kill(leader, syscall.SIGKILL) })
	assert.Assert(t, running(leader))
	parent.Process.Kill()
	parent.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for running(leader) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.Assert(t, !running(leader), "leader %d outlived its parent", leader)
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
		left = marked(run)
		time.Sleep(10 * time.Millisecond)
	}
	assert.Equal(t, len(left), 3, "marked processes of the dead run: %v", left)

	procs, dirs := Sweep()
	assert.Assert(t, procs >= 3, "swept %d processes", procs)
	assert.Assert(t, dirs >= 1)
	assert.DeepEqual(t, marked(run), []int(nil))
	_, err = os.Stat(dir)
	assert.Assert(t, os.IsNotExist(err))
	for _, pid := range livePids {
		assert.Assert(t, running(pid), "a live run's pid %d was swept", pid)
	}
	_, err = os.Stat(live.Dir())
	assert.NilError(t, err)
}

func marked(run string) []int {
	var out []int
	for _, p := range Scan() {
		if !p.Exited() && strings.HasPrefix(p.Getenv(MarkerEnv), run+"/") {
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
