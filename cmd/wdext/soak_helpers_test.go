package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/wire"
)

// Helpers of TestSoak (soak_e2e_test.go): reading another process's
// figures from /proc and from the Go scheduler trace, telling the
// processes of a run apart, killing one of them safely, and judging a
// reply against the W3C error table.

// procFigures are what /proc says of a process.
type procFigures struct {
	rssKB, hwmKB int64 // VmRSS, VmHWM
	threads      int
	fds          int
}

func readProcFigures(pid int) (procFigures, error) {
	var f procFigures
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return f, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			f.rssKB = n
		case "VmHWM":
			f.hwmKB = n
		case "Threads":
			f.threads = int(n)
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return f, err
	}
	f.fds = len(fds)
	return f, nil
}

// The Go runtime's scheduler trace (GODEBUG=schedtrace=N,scheddetail=1 in
// wdext's environment) is the only view of another Go process's
// goroutines without a debug endpoint, which wdext does not have: every N
// ms it prints a "SCHED" line, then one line per P, per M and per G to
// stderr. Goroutines whose status is 6 (_Gdead, kept for reuse) are not
// counted; the rest are what runtime.NumGoroutine counts plus the
// runtime's own few.
const schedTraceMS = 3000

var (
	schedHeader = regexp.MustCompile(`(?m)^SCHED \d+ms:.* threads=(\d+)`)
	schedG      = regexp.MustCompile(`(?m)^\s+G\d+: status=(\d+)`)
)

// schedDump waits (up to timeout) for a scheduler dump that starts after
// byte offset from of wdext's log and is complete (the next one has
// begun), and counts its live goroutines and its threads.
func soakSchedDump(s *served, from int, timeout time.Duration) (goroutines, threads int, ok bool) {
	end := time.Now().Add(timeout)
	for time.Now().Before(end) {
		log := s.log()
		if from > len(log) {
			from = len(log)
		}
		tail := log[from:]
		hs := schedHeader.FindAllStringSubmatchIndex(tail, 2)
		if len(hs) == 2 {
			threads, _ = strconv.Atoi(tail[hs[0][2]:hs[0][3]])
			for _, m := range schedG.FindAllStringSubmatch(tail[hs[0][1]:hs[1][0]], -1) {
				if st, _ := strconv.Atoi(m[1]); st&^0x1000 != 6 {
					goroutines++
				}
			}
			return goroutines, threads, true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return 0, 0, false
}

// soakZombieHeld is how long a zombie must stay, sample after sample, to
// count as held rather than about to be reaped.
const soakZombieHeld = 5 * time.Second

// zombieWatch follows the zombies of successive samples.
type zombieWatch struct {
	n    int         // samples in a row that make a zombie held
	runs map[int]int // zombie → samples in a row it was seen in
	held []int
}

func newZombieWatch(n int) *zombieWatch { return &zombieWatch{n: n} }

// sample takes the zombies of one sample and returns how many there are.
func (w *zombieWatch) sample(pids []int) int {
	next := make(map[int]int, len(pids))
	for _, pid := range pids {
		next[pid] = w.runs[pid] + 1
		if next[pid] == w.n {
			w.held = append(w.held, pid)
		}
	}
	w.runs = next
	return len(pids)
}

// A process of the run, by what it is.
const (
	kindDriver   = "chromedriver"
	kindBrowser  = "browser"  // chromium's main process (no --type)
	kindRenderer = "renderer" // chromium --type=renderer
	kindHelper   = "helper"   // zygotes, gpu, utilities, crashpad
	kindOther    = "other"
)

type markedProc struct {
	pid, ppid, pgid int
	comm, kind      string
	cmdline         string
}

func (p markedProc) String() string {
	cl := p.cmdline
	if len(cl) > 110 {
		cl = cl[:110] + "…"
	}
	return fmt.Sprintf("pid %d ppid %d pgid %d %s (%s): %s", p.pid, p.ppid, p.pgid, p.comm, p.kind, cl)
}

// runProcesses lists the live processes of the run marked mark, wdext
// itself (pid self) left out, each with what it is.
func runProcesses(mark string, self int) []markedProc {
	var out []markedProc
	for pid, comm := range e2e.MarkedProcesses(mark) {
		if pid == self {
			continue
		}
		p, ok := describeProc(pid, comm)
		if ok {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pid < out[j].pid })
	return out
}

func describeProc(pid int, comm string) (markedProc, bool) {
	p := markedProc{pid: pid, comm: comm}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return p, false
	}
	s := string(stat)
	if end := strings.LastIndexByte(s, ')'); end >= 0 {
		if f := strings.Fields(s[end+1:]); len(f) >= 3 {
			p.ppid, _ = strconv.Atoi(f[1])
			p.pgid, _ = strconv.Atoi(f[2])
		}
	}
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	p.cmdline = strings.TrimSpace(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	switch {
	case comm == "chromedriver":
		p.kind = kindDriver
	case strings.Contains(p.cmdline, "--type=renderer"):
		p.kind = kindRenderer
	case strings.Contains(p.cmdline, "--type="), strings.HasPrefix(comm, "chrome_crash"):
		p.kind = kindHelper
	case strings.HasPrefix(comm, "chrom"):
		p.kind = kindBrowser
	default:
		p.kind = kindOther
	}
	return p, true
}

// killMarked kills pid with SIGKILL if it still is a process of the run
// of the kind wanted. The process is pinned first (os.FindProcess holds a
// pidfd on Linux) and checked after, so a pid reused meanwhile by someone
// else's process is never signalled.
func killMarked(mark string, self, pid int, kind string) bool {
	if pid == self || pid == os.Getpid() || pid <= 1 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	defer p.Release()
	comm, ok := e2e.MarkedProcesses(mark)[pid]
	if !ok {
		return false
	}
	if d, ok := describeProc(pid, comm); !ok || d.kind != kind {
		return false
	}
	return p.Signal(syscall.SIGKILL) == nil
}

// profileDirs lists what Chromium and chromedriver left under dir (the
// TMPDIR of the run, where wdext may give each driver a directory of its
// own): profiles are chromedriver's scoped_dir user data directories
// (at any depth); singleton directories hold only Chromium's
// SingletonSocket/SingletonCookie, which Chromium leaves even after a
// clean Delete Session; other is the rest of dir's own entries.
func profileDirs(dir string) (profiles, singletons, other []string) {
	var walk func(d string, depth int, top bool)
	walk = func(d string, depth int, top bool) {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			name := e.Name()
			path := filepath.Join(d, name)
			rel, _ := filepath.Rel(dir, path)
			switch {
			case e.IsDir() && strings.Contains(name, "scoped_dir"):
				profiles = append(profiles, rel)
			case e.IsDir() && strings.Contains(name, "org.chromium.Chromium."):
				sub, _ := os.ReadDir(path)
				if slices.ContainsFunc(sub, func(s os.DirEntry) bool { return !strings.HasPrefix(s.Name(), "Singleton") }) {
					profiles = append(profiles, rel)
				} else {
					singletons = append(singletons, rel)
				}
			default:
				if top {
					other = append(other, rel)
				}
				if e.IsDir() && depth < 3 {
					walk(path, depth+1, false)
				}
			}
		}
	}
	walk(dir, 0, true)
	return profiles, singletons, other
}

// w3cCodes are the error codes of the WebDriver spec's table.
var w3cCodes = map[string]bool{}

func init() {
	for _, c := range []wire.ErrorCode{
		wire.ElementClickIntercepted, wire.ElementNotInteractable, wire.InsecureCertificate,
		wire.InvalidArgument, wire.InvalidCookieDomain, wire.InvalidElementState,
		wire.InvalidSelector, wire.InvalidSessionID, wire.JavascriptError,
		wire.MoveTargetOutOfBounds, wire.NoSuchAlert, wire.NoSuchCookie, wire.NoSuchElement,
		wire.NoSuchFrame, wire.NoSuchWindow, wire.NoSuchShadowRoot, wire.ScriptTimeout,
		wire.SessionNotCreated, wire.StaleElementReference, wire.DetachedShadowRoot,
		wire.Timeout, wire.UnableToSetCookie, wire.UnableToCaptureScreen,
		wire.UnexpectedAlertOpen, wire.UnknownCommand, wire.UnknownError,
		wire.UnknownMethod, wire.UnsupportedOperation,
	} {
		w3cCodes[string(c)] = true
	}
}

// chromedriverCodes are chromedriver's own error codes beyond the spec's
// table, with HTTP 500: wdext passes a driver's replies to classic
// commands through as they are (a black-box faithful proxy), so a
// crashed renderer is chromedriver's "tab crashed" here too.
var chromedriverCodes = map[string]bool{"tab crashed": true, "disconnected": true, "chrome not reachable": true}

// neverInSoak are codes a well-formed command of the soak must never
// get, faults or not: unknown command, unknown method and invalid
// argument say wdext mistook the command itself; unsupported operation
// that Chromium lacks something, which it does not (the soak runs no
// gc-log, performance log or DevTools client that could hold the
// browser's tracing).
var neverInSoak = map[string]bool{
	string(wire.UnknownCommand):       true,
	string(wire.UnknownMethod):        true,
	string(wire.InvalidArgument):      true,
	string(wire.UnsupportedOperation): true,
}

// soakJudge checks one reply: a 200 with JSON {"value": …}, or a W3C error
// {"value": {"error", "message", "stacktrace"}} with the HTTP status the
// spec pairs with its code. It returns the code ("" for a success) and,
// if the reply is none of those, what is wrong with it.
func soakJudge(status int, contentType string, body []byte) (code string, wrong string) {
	var env map[string]json.RawMessage
	if err := json.Unmarshal(body, &env); err != nil {
		return "", fmt.Sprintf("HTTP %d, body is not a JSON object (%v): %.200q", status, err, body)
	}
	value, ok := env["value"]
	if !ok {
		return "", fmt.Sprintf("HTTP %d, no \"value\": %.200s", status, body)
	}
	if mt, _, _ := strings.Cut(contentType, ";"); strings.TrimSpace(mt) != "application/json" {
		wrong = fmt.Sprintf("Content-Type %q; ", contentType)
	}
	if status == 200 {
		if wrong != "" {
			return "", wrong + fmt.Sprintf("HTTP 200: %.200s", body)
		}
		return "", ""
	}
	var ev map[string]any
	if json.Unmarshal(value, &ev) != nil {
		return "", wrong + fmt.Sprintf("HTTP %d, value is not an error object: %.200s", status, body)
	}
	c, _ := ev["error"].(string)
	_, msgOK := ev["message"].(string)
	_, stOK := ev["stacktrace"].(string)
	switch {
	case c == "":
		return "", wrong + fmt.Sprintf("HTTP %d without an error code: %.200s", status, body)
	case chromedriverCodes[c] && status == http.StatusInternalServerError:
	case !w3cCodes[c]:
		return c, wrong + fmt.Sprintf("HTTP %d, %q is no W3C error code: %.200s", status, c, body)
	case status != wire.ErrorCode(c).Status():
		return c, wrong + fmt.Sprintf("HTTP %d for %q (the spec says %d): %.200s", status, c, wire.ErrorCode(c).Status(), body)
	case !msgOK || !stOK:
		return c, wrong + fmt.Sprintf("HTTP %d, %q without a string message and stacktrace: %.200s", status, c, body)
	}
	if wrong != "" {
		return c, wrong + fmt.Sprintf("HTTP %d: %.200s", status, body)
	}
	return c, ""
}

// soakStats are the figures of a soak run, shared by its goroutines.
type soakStats struct {
	mu           sync.Mutex
	start        time.Time
	commands     int
	byOp         map[string]int
	ok           int
	errors       map[string]int // by W3C code
	errorsOp     map[string]int // "op: code"
	firstMsg     map[string]string
	aborts       int // requests the client aborted before an answer
	abortsOp     map[string]int
	sessions     int // created
	faults       map[string]int
	skipped      map[string]int // fault kinds with no process to kill at the time
	faultLog     []faultEvent
	slowest      []slowReq      // the slowest answers, slowest first
	problems     []string       // requests without a W3C answer, or with a wrong one
	problemKinds map[string]int // their number by kind
	nProblems    int
	hangs        int
}

type slowReq struct {
	took time.Duration
	what string
}

// maxSlowest is how many of the slowest answers are kept.
const maxSlowest = 8

// answered notes an answer's time; st.mu is held.
func (st *soakStats) answered(took time.Duration, what string) {
	if len(st.slowest) == maxSlowest && took <= st.slowest[maxSlowest-1].took {
		return
	}
	st.slowest = append(st.slowest, slowReq{took, what})
	sort.Slice(st.slowest, func(i, j int) bool { return st.slowest[i].took > st.slowest[j].took })
	if len(st.slowest) > maxSlowest {
		st.slowest = st.slowest[:maxSlowest]
	}
}

// lastFault says when the soak is and what the last fault was; st.mu is
// held.
func (st *soakStats) lastFault() string {
	at := time.Since(st.start).Truncate(time.Millisecond)
	if n := len(st.faultLog); n > 0 {
		f := st.faultLog[n-1]
		return fmt.Sprintf("at %v, last fault: %s pid %d at %v", at, f.kind, f.pid, f.at)
	}
	return fmt.Sprintf("at %v, no fault yet", at)
}

type faultEvent struct {
	at   time.Duration
	kind string
	pid  int
}

func newSoakStats() *soakStats {
	return &soakStats{
		start:    time.Now(),
		byOp:     map[string]int{},
		errors:   map[string]int{},
		errorsOp: map[string]int{},
		abortsOp: map[string]int{},
		faults:   map[string]int{},
		skipped:  map[string]int{},

		problemKinds: map[string]int{},
	}
}

// maxExamples is how many problems of a kind are kept in full (all are
// counted).
const maxExamples = 3

// problem counts a request without a right W3C answer under kind (what
// went wrong with which command) and keeps the first few in full.
func (st *soakStats) problem(kind, format string, args ...any) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.nProblems++
	st.problemKinds[kind]++
	if st.problemKinds[kind] <= maxExamples {
		st.problems = append(st.problems, fmt.Sprintf("(%s) %s", st.lastFault(), fmt.Sprintf(format, args...)))
	}
}

func (st *soakStats) fault(kind string, pid int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.faults[kind]++
	st.faultLog = append(st.faultLog, faultEvent{time.Since(st.start).Truncate(time.Millisecond), kind, pid})
}

func soakSum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// counts prints a map as {k: v, …}, largest first.
func soakCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
