package procgroup

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// NamespaceEnv set to "on" puts each supervisor in a PID namespace of its
// own, where the machine allows one. Not the default: the namespace's
// processes see their own pids but the machine's /proc, so a browser
// reads another process's figures for its children (Chromium's
// SystemInfo.getProcessInfo) and reports pids that name other processes
// outside.
const NamespaceEnv = "WDEXT_PIDNS"

// containment is how a group's processes are held together.
type containment int

const (
	// groupsOnly: the supervisor is a subreaper and kills its
	// descendants when it ends; one killed by SIGKILL leaves what its
	// command started to the next wdext's Sweep.
	groupsOnly containment = iota
	// pidNamespace: the supervisor is the init of a PID namespace; the
	// kernel kills everything in it when the supervisor dies, however.
	pidNamespace
	// userPIDNamespace: the same, in a user namespace of its own that
	// maps the caller's ids to themselves (without privileges).
	userPIDNamespace
)

func (c containment) String() string {
	switch c {
	case pidNamespace:
		return "pid namespace per group"
	case userPIDNamespace:
		return "user and pid namespace per group"
	}
	return "supervised process groups (no namespace: a wdext killed together with its supervisors leaves its browsers to the next wdext's sweep)"
}

// attr is the supervisor's SysProcAttr under c.
func (c containment) attr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	switch c {
	case pidNamespace:
		a.Cloneflags = syscall.CLONE_NEWPID
	case userPIDNamespace:
		a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	}
	return a
}

// contained is the containment in force (a variable for tests): process
// groups, or with NamespaceEnv "on" the strongest available.
var contained = sync.OnceValue(func() containment {
	if os.Getenv(NamespaceEnv) != "on" {
		return groupsOnly
	}
	return available()
})

// available is the strongest containment this machine allows, found once
// by starting a supervisor that exits at once under each.
var available = sync.OnceValue(func() containment {
	for _, c := range []containment{pidNamespace, userPIDNamespace} {
		probe := exec.Command("/proc/self/exe")
		probe.Env = []string{superviseEnv + "=probe"}
		probe.SysProcAttr = c.attr()
		if probe.Run() == nil {
			return c
		}
	}
	return groupsOnly
})

// Containment says how the groups of this process are held together (for
// the log).
func Containment() string { return contained().String() }
