package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/internal/e2e"
)

// soakSessionTimeout is wdext's --session-timeout in the soak.
const soakSessionTimeout = 5 * time.Second

// TestSoak is the soak and fault suite: WDEXT_SOAK_CLIENTS clients (4)
// send a mix of classic and extension commands through `wdext serve` for
// WDEXT_SOAK (40s; any Go duration, e.g. WDEXT_SOAK=10m with
// -timeout 20m for the long run) while a fault injector SIGKILLs, every
// WDEXT_SOAK_FAULT_EVERY (6s, ±50%), a renderer, a browser or the
// chromedriver of this wdext (by pid; only processes of this run), and
// the clients abort 5% of their requests (20% of their new sessions) at a
// random moment before the answer. WDEXT_SOAK_SEED replays a run's random
// choices (not the timing); WDEXT_SOAK_REPORT=file appends the figures
// line to file (go test shows t.Log only with -v or on failure).
//
// It asserts:
//   - every request got a W3C answer before its 45 s deadline (an abort
//     aside): a 200 with {"value": …}, or {"value": {"error", "message",
//     "stacktrace"}} with a code of the spec's table and the HTTP status
//     it pairs with it; never a code none of the soak's commands may get
//     (see neverInSoak);
//   - after the soak a new session works, and once every session the
//     clients know of is deleted, only wdext and at most one chromedriver
//     are left of the run (no browser of a lost or aborted session) and
//     no chromedriver profile directory is left in the run's TMPDIR;
//   - wdext's figures at that point against its start (after a warm-up
//     session): fds ≤ start + 2×clients + 8 and goroutines ≤ start +
//     4×clients + 16 (an idle keep-alive connection to the driver, one fd
//     and two goroutines, may be left per request that was in flight at
//     once: ≤ 2 per client), RSS ≤ start + 100 MB and never above 1 GB;
//     threads are only reported (the Go runtime keeps the threads it
//     made);
//   - zombies below wdext (whose parent is wdext or a live descendant):
//     sampled every 250 ms, none is held through soakZombieHeld (5 s) of
//     samples but at most one, and at quiescence at most one is left
//     (processes are reaped as they exit: issue 28's 860 were not);
//   - after SIGTERM wdext exits cleanly within 60 s, no process of the
//     run is left and no chromedriver profile directory (scoped_dir) is
//     left in the run's own TMPDIR;
//   - then a second wdext with 2 sessions is killed by SIGKILL: no process
//     of it, no group TMPDIR and no profile is left (waited for up to
//     60 s, the time reported), without a next wdext.
func TestSoak(t *testing.T) {
	chromiumtest.Require(t)
	dur := soakEnvDuration(t, "WDEXT_SOAK", 40*time.Second)
	nClients := soakEnvInt(t, "WDEXT_SOAK_CLIENTS", 4)
	faultEvery := soakEnvDuration(t, "WDEXT_SOAK_FAULT_EVERY", 6*time.Second)
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("WDEXT_SOAK_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("WDEXT_SOAK_SEED=%q: %v", v, err)
		}
		seed = n
	}
	if dl, ok := t.Deadline(); ok && time.Until(dl) < dur+3*time.Minute {
		t.Fatalf("WDEXT_SOAK=%v needs about %v more than the time left to go test (%v): raise -timeout", dur, 3*time.Minute, time.Until(dl).Truncate(time.Second))
	}

	wdextBinary(t) // built before TMPDIR changes
	// The run's own TMPDIR (chromedriver's profiles go there), removed
	// after startServe's safety net has killed everything of the run.
	tmp, err := os.MkdirTemp("", "wds")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	godebug := fmt.Sprintf("schedtrace=%d,scheddetail=1", schedTraceMS)
	if old := os.Getenv("GODEBUG"); old != "" {
		godebug = old + "," + godebug
	}
	t.Setenv("GODEBUG", godebug) // goroutine counts, see schedDump
	// A client that gives up on New Session after wdext answered leaves a
	// session that wdext holds and the client never heard of: the
	// session timeout reaps it (sleeping scripts keep theirs busy).
	s := startServe(t, "--session-timeout", soakSessionTimeout.String())
	self := s.cmd.Process.Pid
	st := newSoakStats()

	var (
		start, end, peak procFigures
		gStart, gEnd     int
		gMax             int
		leftQuiet        []markedProc
		leftExit         []markedProc
		profiles, singl  []string
		otherTmp         []string
		drivers          int
		browsersMax      int
		profilesMax      int
		zombiesMax       int   // at one sample
		zombiesHeld      []int // through soakZombieHeld of samples
		zombiesQuiet     = -1
		killLeft         = -1 // processes and directories left after SIGKILL
		killTook         time.Duration
		profilesQuiet    []string
		logFrom, logTo   int
		quiesced, exited bool
	)
	// The figures, whatever happens.
	defer func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		mb := func(kb int64) int64 { return kb >> 10 }
		line := fmt.Sprintf("soak: %v %d clients (seed %d): %d commands (%d ok), %d faults (%d renderer, %d browser, %d chromedriver; skipped %s), "+
			"%d aborts (%d new session), %d sessions created, errors by code %s, %d hangs, %d problems, "+
			"wdext RSS start/max/end %d/%d/%d MB (VmHWM %d), fds %d/%d/%d, threads %d/%d/%d, goroutines %d/%d/%d, browsers max %d, profiles max %d, "+
			"zombies max %d, held %d, at quiescence %d, left %d in %v after SIGKILL, "+
			"leftover procs at quiescence %s / after exit %s, leftover profiles at quiescence %s / after exit %s (singleton dirs %d, other TMPDIR entries %d)",
			dur, nClients, seed, st.commands, st.ok, soakSum(st.faults), st.faults[kindRenderer], st.faults[kindBrowser], st.faults[kindDriver], soakCounts(st.skipped),
			st.aborts, st.abortsOp[opNewSession], st.sessions, soakCounts(st.errors), st.hangs, st.nProblems,
			mb(start.rssKB), mb(peak.rssKB), mb(end.rssKB), mb(end.hwmKB), start.fds, peak.fds, end.fds, start.threads, peak.threads, end.threads,
			gStart, gMax, gEnd, browsersMax, profilesMax,
			zombiesMax, len(zombiesHeld), zombiesQuiet, killLeft, killTook.Round(time.Millisecond),
			soakOrUnknown(quiesced, len(leftQuiet)), soakOrUnknown(exited, len(leftExit)), soakOrUnknown(quiesced, len(profilesQuiet)), soakOrUnknown(exited, len(profiles)), len(singl), len(otherTmp))
		t.Log(line)
		fmt.Fprintln(os.Stderr, line)
		if path := os.Getenv("WDEXT_SOAK_REPORT"); path != "" {
			if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				fmt.Fprintln(f, line)
				f.Close()
			}
		}
		t.Logf("problems by kind %s", soakCounts(st.problemKinds))
		t.Logf("commands by op %s", soakCounts(st.byOp))
		t.Logf("errors by op %s", soakCounts(st.errorsOp))
		for k, m := range st.firstMsg {
			t.Logf("first %s: %s", k, m)
		}
		t.Logf("aborts by op %s", soakCounts(st.abortsOp))
		var fl []string
		for _, f := range st.faultLog {
			fl = append(fl, fmt.Sprintf("%v %s %d", f.at, f.kind, f.pid))
		}
		t.Logf("faults: %s", strings.Join(fl, ", "))
		for _, r := range st.slowest {
			t.Logf("slow: %v %s", r.took, r.what)
		}
	}()

	clients := make([]*soakClient, nClients)
	for i := range clients {
		tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 2, DisableCompression: true}
		clients[i] = &soakClient{
			id: i, base: s.url, tr: tr, hc: &http.Client{Transport: tr},
			rng: rand.New(rand.NewPCG(seed, uint64(i))), st: st,
		}
	}
	closeIdle := func() {
		for _, c := range clients {
			c.tr.CloseIdleConnections()
		}
	}

	// Warm-up: chromedriver started, one session through every command,
	// deleted; then the start figures.
	if err := clients[0].warmUp(); err != nil {
		t.Fatalf("warm-up: %v", err)
	}
	closeIdle()
	time.Sleep(time.Second)
	logFrom = len(s.log())
	start, err = readProcFigures(self)
	if err != nil {
		t.Fatalf("wdext's figures: %v", err)
	}
	peak = start
	g, _, ok := soakSchedDump(s, logFrom, 3*schedTraceMS*time.Millisecond)
	if !ok {
		t.Fatalf("no scheduler trace from wdext (GODEBUG=%s)", godebug)
	}
	gStart = g
	t.Logf("start: %+v, %d goroutines; processes of the run: %v", start, gStart, runProcesses(s.mark, self))

	// The soak.
	st.mu.Lock()
	st.start = time.Now()
	st.mu.Unlock()
	zombies := newZombieWatch(int(soakZombieHeld / (250 * time.Millisecond)))
	stopSampler := make(chan struct{})
	var samplerDone sync.WaitGroup
	samplerDone.Add(1)
	go func() { // wdext's figures and the run's browsers, every 250 ms
		defer samplerDone.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopSampler:
				return
			case <-tick.C:
			}
			if f, err := readProcFigures(self); err == nil {
				st.mu.Lock()
				peak.rssKB = max(peak.rssKB, f.rssKB)
				peak.fds = max(peak.fds, f.fds)
				peak.threads = max(peak.threads, f.threads)
				st.mu.Unlock()
			}
			n := 0
			for _, p := range runProcesses(s.mark, self) {
				if p.kind == kindBrowser {
					n++
				}
			}
			pr, _, _ := profileDirs(tmp)
			z := zombies.sample(e2e.Zombies(self))
			st.mu.Lock()
			browsersMax = max(browsersMax, n)
			profilesMax = max(profilesMax, len(pr))
			zombiesMax = max(zombiesMax, z)
			st.mu.Unlock()
		}
	}()
	stopFaults := make(chan struct{})
	faultsDone := make(chan struct{})
	go func() { // the fault injector
		defer close(faultsDone)
		rng := rand.New(rand.NewPCG(seed, 1<<32))
		for {
			wait := faultEvery/2 + time.Duration(rng.Int64N(int64(faultEvery)))
			select {
			case <-stopFaults:
				return
			case <-time.After(wait):
			}
			kind := kindRenderer // 40%, browser 30%, chromedriver 30%
			switch r := rng.IntN(10); {
			case r >= 7:
				kind = kindDriver
			case r >= 4:
				kind = kindBrowser
			}
			var pids []int
			for _, p := range runProcesses(s.mark, self) {
				if p.kind == kind {
					pids = append(pids, p.pid)
				}
			}
			if len(pids) == 0 {
				st.mu.Lock()
				st.skipped[kind]++
				st.mu.Unlock()
				continue
			}
			pid := pids[rng.IntN(len(pids))]
			if killMarked(s.mark, self, pid, kind) {
				st.fault(kind, pid)
			} else {
				st.mu.Lock()
				st.skipped[kind]++
				st.mu.Unlock()
			}
		}
	}()
	stopClients := make(chan struct{})
	var clientsDone sync.WaitGroup
	for _, c := range clients {
		clientsDone.Add(1)
		go func() {
			defer clientsDone.Done()
			c.run(stopClients)
		}()
	}
	time.Sleep(dur)
	close(stopFaults)
	<-faultsDone
	close(stopClients)
	allDone := make(chan struct{})
	go func() { clientsDone.Wait(); close(allDone) }()
	select {
	case <-allDone:
	case <-time.After(3*soakDeadline + 30*time.Second):
		// Every request has its deadline: this is the suite's own bug.
		t.Fatalf("clients did not stop")
	}
	close(stopSampler)
	samplerDone.Wait()
	st.mu.Lock()
	zombiesHeld = zombies.held
	st.mu.Unlock()

	// After the soak: wdext still creates sessions.
	if err := clients[0].sanity(); err != nil {
		t.Errorf("after the soak: %v", err)
	}

	// Quiescence: every session the clients know of is deleted, and the
	// session timeout has passed for those they did not hear of, so only
	// wdext and its chromedriver may be left.
	closeIdle()
	time.Sleep(2 * soakSessionTimeout)
	quiet := func() int {
		n := 0
		for _, p := range runProcesses(s.mark, self) {
			if p.kind != kindDriver {
				n++
			}
		}
		return n
	}
	for i := 0; i < 3 && settle(0, quiet) != 0; i++ {
	}
	settle(0, func() int { pr, _, _ := profileDirs(tmp); return len(pr) })
	profilesQuiet, _, _ = profileDirs(tmp)
	for _, p := range runProcesses(s.mark, self) {
		if p.kind == kindDriver {
			drivers++
		} else {
			leftQuiet = append(leftQuiet, p)
		}
	}
	var zq []int
	settle(true, func() bool { zq = e2e.Zombies(self); return len(zq) <= 1 })
	zombiesQuiet = len(zq)
	quiesced = true
	time.Sleep(time.Second)
	end, err = readProcFigures(self)
	if err != nil {
		t.Fatalf("wdext's figures: %v", err)
	}
	logTo = len(s.log())
	gEnd, _, ok = soakSchedDump(s, logTo, 3*schedTraceMS*time.Millisecond)
	if !ok {
		t.Errorf("no scheduler trace from wdext at the end")
	}
	gMax = max(gStart, gEnd, soakSchedMax(s.log()[logFrom:]))
	peak.rssKB = max(peak.rssKB, end.rssKB)
	peak.fds = max(peak.fds, end.fds)
	peak.threads = max(peak.threads, end.threads)

	// Shutdown.
	s.signalAndWait(t, syscall.SIGTERM)
	left := func() int { return len(runProcesses(s.mark, self)) }
	for i := 0; i < 3 && settle(0, left) != 0; i++ {
	}
	leftExit = runProcesses(s.mark, self)
	profiles, singl, otherTmp = profileDirs(tmp)
	exited = true

	// SIGKILL: a second wdext with 2 sessions, killed outright.
	k := startServe(t)
	k.newSession(t)
	k.newSession(t)
	killed := time.Now()
	if err := k.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-k.exited
	kill := k.cmd.Process.Pid
	killDirs := func() []string {
		d, _ := filepath.Glob(filepath.Join(tmp, fmt.Sprintf("wdext-%d.*", kill)))
		pr, _, _ := profileDirs(tmp)
		return append(d, pr...)
	}
	killLeftovers := func() int { return len(runProcesses(k.mark, kill)) + len(killDirs()) }
	for deadline := time.Now().Add(60 * time.Second); killLeftovers() > 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	killTook = time.Since(killed)
	killProcs, killLeftDirs := runProcesses(k.mark, kill), killDirs()
	killLeft = len(killProcs) + len(killLeftDirs)

	// The verdict.
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.commands == 0 {
		t.Errorf("no command was sent")
	}
	if dur >= 20*time.Second && soakSum(st.faults) == 0 {
		t.Errorf("no fault was injected (skipped: %s)", soakCounts(st.skipped))
	}
	if st.nProblems > 0 {
		t.Errorf("%d requests without a right W3C answer (%d hangs), by kind %s; the first of each kind:\n  %s",
			st.nProblems, st.hangs, soakCounts(st.problemKinds), strings.Join(st.problems, "\n  "))
	}
	if len(leftQuiet) > 0 {
		t.Errorf("with every known session deleted, %d processes of the run are left (%d new sessions were aborted): %s",
			len(leftQuiet), st.abortsOp[opNewSession], soakJoinProcs(leftQuiet))
	}
	if len(profilesQuiet) > 0 {
		// chromedriver leaves the profile of a browser killed under it;
		// it is in the driver's TMPDIR, removed when that driver ends
		// (checked after exit below).
		t.Logf("with every known session deleted, %d chromedriver profile directories are left in the live driver's TMPDIR: %v", len(profilesQuiet), profilesQuiet)
	}
	if drivers > 1 {
		t.Errorf("%d chromedrivers at quiescence (want ≤ 1)", drivers)
	}
	if lim := start.fds + 2*nClients + 8; end.fds > lim {
		t.Errorf("wdext's fds: %d at the end, %d at the start (bound %d)", end.fds, start.fds, lim)
	}
	if lim := gStart + 4*nClients + 16; gEnd > lim {
		t.Errorf("wdext's goroutines: %d at the end, %d at the start (bound %d)", gEnd, gStart, lim)
	}
	if lim := start.rssKB + 100<<10; end.rssKB > lim {
		t.Errorf("wdext's RSS: %d MB at the end, %d MB at the start (bound +100 MB)", end.rssKB>>10, start.rssKB>>10)
	}
	if peak.rssKB > 1<<20 {
		t.Errorf("wdext's RSS peaked at %d MB (bound 1 GB)", peak.rssKB>>10)
	}
	if len(zombiesHeld) > 1 {
		t.Errorf("%d zombies below wdext were held through %v of samples (bound 1): %v", len(zombiesHeld), soakZombieHeld, zombiesHeld)
	}
	if zombiesQuiet > 1 {
		t.Errorf("with every known session deleted, %d zombies are left below wdext: %v", zombiesQuiet, zq)
	}
	if killLeft > 0 {
		t.Errorf("%v after SIGKILL of a wdext with 2 sessions, left: %s; directories %v", killTook.Round(time.Millisecond), soakJoinProcs(killProcs), killLeftDirs)
	}
	if len(leftExit) > 0 {
		t.Errorf("after wdext exited, %d processes of the run are left: %s", len(leftExit), soakJoinProcs(leftExit))
	}
	if st.sessions > 0 && profilesMax == 0 {
		t.Errorf("no chromedriver profile directory was ever seen in the run's TMPDIR %s: the leftover check proves nothing", tmp)
	}
	if len(profiles) > 0 {
		t.Errorf("after wdext exited, %d chromedriver profile directories are left in TMPDIR: %v", len(profiles), profiles)
	}
	if len(otherTmp) > 0 {
		t.Logf("also in TMPDIR: %v", otherTmp)
	}
}

func soakOrUnknown(known bool, n int) string {
	if !known {
		return "?"
	}
	return strconv.Itoa(n)
}

func soakJoinProcs(ps []markedProc) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("\n  " + p.String())
	}
	return b.String()
}

// schedMax is the most live goroutines of any complete scheduler dump in
// log.
func soakSchedMax(log string) int {
	hs := schedHeader.FindAllStringIndex(log, -1)
	most := 0
	for i := 0; i+1 < len(hs); i++ {
		n := 0
		for _, m := range schedG.FindAllStringSubmatch(log[hs[i][1]:hs[i+1][0]], -1) {
			if st, _ := strconv.Atoi(m[1]); st&^0x1000 != 6 {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

func soakEnvDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive Go duration (90s, 10m)", name, v)
	}
	return d
}

func soakEnvInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

const (
	// soakDeadline is how long a client waits for any answer: more
	// than the session's page load timeout (20 s) and the extension
	// commands' own timeouts (10 s), so only a hang runs into it.
	soakDeadline         = 45 * time.Second
	soakAbortRate        = 0.05
	soakSessionAbortRate = 0.20
	opNewSession         = "new session"
)

// soakSessionBody asks for Chrome (wdext adds the machine's defaults) with
// timeouts that keep every legitimate answer well inside soakDeadline.
const soakSessionBody = `{"capabilities":{"alwaysMatch":{"browserName":"chrome","timeouts":{"script":5000,"pageLoad":20000,"implicit":0}}}}`

// soakPage is a small page with some objects for census and measure.
var soakPage = "data:text/html;charset=utf-8," + url.PathEscape(
	`<title>soak</title><p>soak</p><script>window.junk = []; for (let i = 0; i < 2000; i++) junk.push({i, s: "x" + i, a: [i]});</script>`)

// soakOp is one kind of command of the mix.
type soakOp struct {
	name     string
	method   string
	path     string // after /session/{id}
	body     func(r *rand.Rand) any
	weight   int
	abortMax time.Duration // aborts land within this
}

func soakFixed(v any) func(*rand.Rand) any { return func(*rand.Rand) any { return v } }

var soakOps = []soakOp{
	{"execute/sync", "POST", "/execute/sync", soakFixed(map[string]any{"script": "return document.title + junk.length", "args": []any{}}), 14, 20 * time.Millisecond},
	{"execute/async", "POST", "/execute/async", soakFixed(map[string]any{"script": "const done = arguments[arguments.length - 1]; setTimeout(() => done(1), 20)", "args": []any{}}), 10, 50 * time.Millisecond},
	{"execute/async-sleep", "POST", "/execute/async", func(r *rand.Rand) any {
		return map[string]any{"script": fmt.Sprintf("const done = arguments[arguments.length - 1]; setTimeout(() => done('slept'), %d)", 500+r.IntN(2500)), "args": []any{}}
	}, 5, 3 * time.Second},
	{"execute/async-timeout", "POST", "/execute/async", soakFixed(map[string]any{"script": "const done = arguments[arguments.length - 1]; setTimeout(() => done('late'), 7000)", "args": []any{}}), 1, 7 * time.Second},
	{"title", "GET", "/title", nil, 10, 10 * time.Millisecond},
	{"url", "GET", "/url", nil, 8, 10 * time.Millisecond},
	{"navigate", "POST", "/url", soakFixed(map[string]any{"url": soakPage}), 5, 200 * time.Millisecond},
	{"forcesample", "POST", "/forcesample", soakFixed(map[string]any{}), 10, 20 * time.Millisecond},
	{"measure", "POST", "/wdext/memory/measure", soakFixed(map[string]any{"timeout": 10000}), 6, 50 * time.Millisecond},
	{"gc", "POST", "/wdext/memory/gc", soakFixed(map[string]any{"timeout": 10000}), 5, 50 * time.Millisecond},
	{"census", "POST", "/wdext/memory/census", soakFixed(map[string]any{}), 3, 300 * time.Millisecond},
	{"delete", "DELETE", "", nil, 2, 50 * time.Millisecond},
}

var soakWeights = func() int {
	n := 0
	for _, o := range soakOps {
		n += o.weight
	}
	return n
}()

func soakPickOp(r *rand.Rand) soakOp {
	n := r.IntN(soakWeights)
	for _, o := range soakOps {
		if n < o.weight {
			return o
		}
		n -= o.weight
	}
	return soakOps[0]
}

func soakOpNamed(name string) soakOp {
	for _, o := range soakOps {
		if o.name == name {
			return o
		}
	}
	panic(name)
}

// soakClient is one client of the soak: one session at a time.
type soakClient struct {
	id      int
	base    string
	tr      *http.Transport
	hc      *http.Client
	rng     *rand.Rand
	st      *soakStats
	sid     string
	errs    int  // consecutive errors on sid
	reload  bool // navigate before the next command (after an error)
	lastErr string
	history []string // the client's last requests, for the problems' context
}

// note adds a request's outcome to the client's history.
func (c *soakClient) note(op, path, outcome string) {
	c.st.mu.Lock()
	at := time.Since(c.st.start).Truncate(time.Millisecond)
	c.st.mu.Unlock()
	if id := soakSessionOf(path); id != "" && len(id) > 8 {
		op += " " + id[:8]
	}
	c.history = append(c.history, fmt.Sprintf("%v %s → %s", at, op, outcome))
	if len(c.history) > 8 {
		c.history = c.history[1:]
	}
}

// recent is the client's history before the request at hand.
func (c *soakClient) recent() string {
	return "\n      before it: " + strings.Join(c.history, "; ")
}

// sessionOf is the session id in a path, if any.
func soakSessionOf(path string) string {
	rest, ok := strings.CutPrefix(path, "/session/")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, "/")
	return id
}

// soakReply is what came of one request.
type soakReply struct {
	answered bool // a W3C answer, right or wrong
	aborted  bool // the client gave up on purpose before the answer
	status   int
	code     string // W3C error code; "" for a success
	message  string
	value    json.RawMessage
}

// send sends one request. With probability abort it is cancelled at a
// random moment within abortMax, unless its answer has begun by then.
func (c *soakClient) send(op, method, path string, body any, abort float64, abortMax time.Duration) soakReply {
	var data []byte
	if body != nil {
		data, _ = json.Marshal(body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), soakDeadline)
	defer cancel()
	var mu sync.Mutex
	answering, aborted := false, false
	if abort > 0 && c.rng.Float64() < abort {
		d := time.Duration(c.rng.Int64N(int64(abortMax)))
		timer := time.AfterFunc(d, func() {
			mu.Lock()
			defer mu.Unlock()
			if !answering {
				aborted = true
				cancel()
			}
		})
		defer timer.Stop()
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(data))
	if err != nil {
		panic(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.st.mu.Lock()
	c.st.commands++
	c.st.byOp[op]++
	c.st.mu.Unlock()
	began := time.Now()
	resp, err := c.hc.Do(req)
	mu.Lock()
	answering = true
	wasAborted := aborted
	mu.Unlock()
	var b []byte
	if err == nil {
		b, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	took := time.Since(began).Truncate(time.Millisecond)
	what := fmt.Sprintf("client %d %s %s %s", c.id, op, method, path)
	switch {
	case err != nil && wasAborted:
		c.st.mu.Lock()
		c.st.aborts++
		c.st.abortsOp[op]++
		c.st.mu.Unlock()
		c.note(op, path, "aborted")
		return soakReply{aborted: true}
	case err != nil && ctx.Err() == context.DeadlineExceeded:
		c.st.mu.Lock()
		c.st.hangs++
		c.st.mu.Unlock()
		c.st.problem("hang: "+op, "HANG: %s: no answer within %v%s", what, soakDeadline, c.recent())
		c.note(op, path, "hang")
		return soakReply{}
	case err != nil:
		c.st.problem("no answer: "+op, "no answer: %s after %v: %v%s", what, took, err, c.recent())
		c.note(op, path, "no answer")
		return soakReply{}
	}
	code, wrong := soakJudge(resp.StatusCode, resp.Header.Get("Content-Type"), b)
	r := soakReply{answered: true, status: resp.StatusCode, code: code}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	json.Unmarshal(b, &env)
	r.value = env.Value
	if code != "" {
		var ev struct {
			Message string `json:"message"`
		}
		json.Unmarshal(env.Value, &ev)
		r.message = ev.Message
	}
	if wrong == "" && neverInSoak[code] {
		wrong = fmt.Sprintf("%q for a well-formed command: %.300s", code, r.message)
	}
	if wrong != "" {
		c.st.problem(fmt.Sprintf("%s → %d %s", op, resp.StatusCode, code), "wrong answer: %s after %v: %s%s", what, took, wrong, c.recent())
	}
	outcome := fmt.Sprint(r.status)
	if code != "" {
		outcome += " " + code
	}
	c.note(op, path, outcome)
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	c.st.answered(took, fmt.Sprintf("%s → %d %s", what, r.status, code))
	if code == "" && wrong == "" {
		c.st.ok++
	}
	if code != "" {
		c.st.errors[code]++
		k := op + ": " + code
		c.st.errorsOp[k]++
		if c.st.firstMsg == nil {
			c.st.firstMsg = map[string]string{}
		}
		if _, seen := c.st.firstMsg[k]; !seen {
			m := r.message
			if len(m) > 300 {
				m = m[:300] + "…"
			}
			c.st.firstMsg[k] = fmt.Sprintf("(%s, after %v) %s", c.st.lastFault(), took, m)
		}
	}
	return r
}

// sessionPath is the path of a command of the current session.
func (c *soakClient) sessionPath(p string) string { return "/session/" + c.sid + p }

// newSession creates a session and opens the soak page in it.
func (c *soakClient) newSession(abort float64) bool {
	r := c.send(opNewSession, "POST", "/session", json.RawMessage(soakSessionBody), abort, 1500*time.Millisecond)
	if !r.answered || r.code != "" {
		c.lastErr = r.code + ": " + r.message
		return false
	}
	var v struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(r.value, &v) != nil || v.SessionID == "" {
		c.st.problem("new session → 200 without a sessionId", "wrong answer: client %d new session: 200 without a sessionId: %.200s", c.id, r.value)
		return false
	}
	c.sid, c.errs, c.reload = v.SessionID, 0, true
	c.st.mu.Lock()
	c.st.sessions++
	c.st.mu.Unlock()
	return true
}

// run sends commands until stop closes, then deletes its session.
func (c *soakClient) run(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			c.deleteSession()
			return
		default:
		}
		if c.sid == "" {
			if !c.newSession(soakSessionAbortRate) {
				select {
				case <-stop:
				case <-time.After(300 * time.Millisecond):
				}
			}
			continue
		}
		o := soakPickOp(c.rng)
		if c.reload {
			o = soakOpNamed("navigate")
		}
		var body any
		if o.body != nil {
			body = o.body(c.rng)
		}
		r := c.send(o.name, o.method, c.sessionPath(o.path), body, soakAbortRate, o.abortMax)
		switch {
		case r.aborted && o.name == "delete":
			// A client that gave up on a Delete Session sends it again.
			c.deleteSession()
		case r.aborted, !r.answered:
		case r.code == "invalid session id":
			c.sid = ""
		case o.name == "delete" && r.code == "":
			c.sid = ""
		case r.code != "" && r.code != "script timeout":
			c.errs++
			c.reload = true
			if c.errs >= 3 {
				c.deleteSession()
			}
		default:
			c.errs = 0
			if o.name == "navigate" {
				c.reload = false
			}
		}
	}
}

// deleteSession deletes the current session, if any (no abort).
func (c *soakClient) deleteSession() {
	if c.sid == "" {
		return
	}
	for i := 0; i < 2; i++ {
		r := c.send("delete", "DELETE", c.sessionPath(""), nil, 0, 0)
		if r.answered && (r.code == "" || r.code == "invalid session id") {
			break
		}
	}
	c.sid = ""
}

// warmUp creates a session, sends every command of the mix once (all
// must succeed) and deletes it.
func (c *soakClient) warmUp() error {
	if !c.newSession(0) {
		return fmt.Errorf("new session: %s", c.lastErr)
	}
	for _, o := range append([]soakOp{soakOpNamed("navigate")}, soakOps...) {
		if o.name == "execute/async-timeout" {
			continue
		}
		var body any
		if o.body != nil {
			body = o.body(c.rng)
		}
		r := c.send(o.name, o.method, c.sessionPath(o.path), body, 0, 0)
		if !r.answered || r.code != "" {
			return fmt.Errorf("%s: %s %s", o.name, r.code, r.message)
		}
	}
	c.sid = ""
	return nil
}

// sanity checks that a new session works after the soak.
func (c *soakClient) sanity() error {
	var created bool
	for i := 0; i < 3 && !created; i++ {
		if created = c.newSession(0); !created {
			time.Sleep(time.Second)
		}
	}
	if !created {
		return fmt.Errorf("new session failed 3 times, last: %s", c.lastErr)
	}
	defer c.deleteSession()
	for _, name := range []string{"navigate", "title", "forcesample", "measure"} {
		o := soakOpNamed(name)
		var body any
		if o.body != nil {
			body = o.body(c.rng)
		}
		if r := c.send(o.name, o.method, c.sessionPath(o.path), body, 0, 0); !r.answered || r.code != "" {
			return fmt.Errorf("%s: %s %s", o.name, r.code, r.message)
		}
	}
	return nil
}
