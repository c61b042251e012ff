package webdriver_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
)

// percentile is the p-th percentile (nearest rank) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[max(0, min(rank, len(sorted)-1))]
}

// executeSync is one POST /session/{id}/execute/sync round trip, timed.
type executeSync struct {
	client *http.Client
	url    string
	lat    []time.Duration
}

var executeBody = []byte(`{"script":"return 1","args":[]}`)

func (e *executeSync) once(b *testing.B) {
	req, err := http.NewRequest("POST", e.url, bytes.NewReader(executeBody))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	start := time.Now()
	resp, err := e.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	e.lat = append(e.lat, time.Since(start))
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("%s: %d %v", e.url, resp.StatusCode, err)
	}
}

// BenchmarkExecuteSync compares execute/sync round trips straight to
// chromedriver with the same through wdext: sessions on the same
// chromedriver (and so the same browser build), one addressed directly,
// one through wdext, and for reference one through a plain TCP relay;
// requests alternate (which goes first rotating too) so that machine noise
// hits all alike. It reports the p50 and p99 latency of the direct and
// wdext sessions, their ratios (wdext / direct), and the relay's ratios:
// what any extra hop costs on this machine.
func BenchmarkExecuteSync(b *testing.B) {
	env := chromiumtest.Start(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in, err := env.Driver.Current(ctx)
	if err != nil {
		b.Fatal(err)
	}
	relay := tcpRelay(b, in.URL.Host)
	viaID, _ := newWire(b, env.URL, false).newSession(newSessionBody(nil))
	directID, _ := newWire(b, in.URL.String(), false).newSession(withManagedDefaults(newSessionBody(nil)))
	relayID, _ := newWire(b, relay, false).newSession(withManagedDefaults(newSessionBody(nil)))

	direct := newExecuteSync(in.URL.String(), directID)
	via := newExecuteSync(env.URL, viaID)
	relayed := newExecuteSync(relay, relayID)
	interleave(b, direct, via, relayed)

	reportRatios(b, direct, via, "")
	// The floor any intermediary pays here: a byte relay, no HTTP.
	reportRatios(b, direct, relayed, "relay-")
}

// BenchmarkExecuteSyncServe is BenchmarkExecuteSync as a client sees
// wdext deployed: `wdext serve --upstream` in a process of its own, in
// front of the same chromedriver as a session addressed directly; a
// browser each, one call each in turn (which goes first rotating). It
// reports the same p50 and p99 figures and ratios, and what the wdext
// process spent per call (all its threads, from /proc): CPU time, context
// switches, and time runnable but waiting for a core. Two more sessions go
// through relays in processes of their own, for the floor of any hop:
// tcp-relay- copies bytes and knows nothing of HTTP; http-relay- is the
// least an HTTP-aware hop can do. With $WDEXT_BENCH_BASELINE naming
// another wdext binary, its session is one more hop, baseline-, for a
// before and after in one run ($WDEXT_BENCH_WDEXT replaces the wdext
// built from this checkout).
func BenchmarkExecuteSyncServe(b *testing.B) {
	env := chromiumtest.Start(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in, err := env.Driver.Current(ctx)
	if err != nil {
		b.Fatal(err)
	}
	base, pid := serveProcess(b, os.Getenv("WDEXT_BENCH_WDEXT"), "--upstream", in.URL.String())
	httpRelay, httpRelayPID := relayProcess(b, httpRelayEnv, in.URL.Host)
	tcpRelay, tcpRelayPID := relayProcess(b, tcpRelayEnv, in.URL.Host)
	// A remote upstream gets no defaults: all ask for them.
	session := func(base string) *executeSync {
		id, _ := newWire(b, base, false).newSession(withManagedDefaults(newSessionBody(nil)))
		return newExecuteSync(base, id)
	}
	direct := session(in.URL.String())
	hops := []hop{
		{"", session(base), pid, procStats{}},
		{"http-relay-", session(httpRelay), httpRelayPID, procStats{}},
		{"tcp-relay-", session(tcpRelay), tcpRelayPID, procStats{}},
	}
	if bin := os.Getenv("WDEXT_BENCH_BASELINE"); bin != "" { // another build, in the same run
		baseline, pid := serveProcess(b, bin, "--upstream", in.URL.String())
		hops = append(hops, hop{"baseline-", session(baseline), pid, procStats{}})
	}
	all := []*executeSync{direct}
	for i := range hops {
		hops[i].before = threadStats(b, hops[i].pid)
		all = append(all, hops[i].via)
	}
	interleave(b, all...)
	calls := float64(b.N + warmUpRounds)
	for _, h := range hops {
		after := threadStats(b, h.pid)
		reportRatios(b, direct, h.via, h.prefix)
		costPrefix := h.prefix
		if costPrefix == "" {
			costPrefix = "wdext-"
		}
		b.ReportMetric(float64(after.cpu-h.before.cpu)/float64(time.Microsecond)/calls, costPrefix+"cpu-us/call")
		b.ReportMetric(float64(after.switches-h.before.switches)/calls, costPrefix+"ctxsw/call")
		b.ReportMetric(float64(after.waiting-h.before.waiting)/float64(time.Microsecond)/calls, costPrefix+"runq-us/call")
	}
}

// hop is a process between the benchmark and chromedriver.
type hop struct {
	prefix string
	via    *executeSync
	pid    int
	before procStats
}

// relayProcess runs a relay in front of up (host:port) in a process of
// its own, this test binary run again with env set to up (see TestMain),
// until the benchmark ends, and returns its base URL and process id.
func relayProcess(b *testing.B, env, up string) (string, int) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), env+"="+up)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("the relay said nothing: %v", err)
	}
	return strings.TrimSpace(line), cmd.Process.Pid
}

// procStats are a process's CPU time and context switches so far, summed
// over its threads.
type procStats struct {
	cpu      time.Duration
	waiting  time.Duration // runnable but not running: waiting for a core
	switches int64
}

// threadStats reads pid's stats from /proc/PID/task/*/{schedstat,status}
// (the Go runtime keeps its threads, so none is lost between two reads).
func threadStats(b *testing.B, pid int) procStats {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	if err != nil || len(tasks) == 0 {
		b.Fatalf("threads of %d: %v", pid, err)
	}
	var st procStats
	for _, task := range tasks {
		sched, err1 := os.ReadFile(task + "/schedstat")
		status, err2 := os.ReadFile(task + "/status")
		if err1 != nil || err2 != nil {
			continue // the thread just ended
		}
		var ran, waited int64
		fmt.Sscan(string(sched), &ran, &waited)
		st.cpu += time.Duration(ran)
		st.waiting += time.Duration(waited)
		for _, line := range strings.Split(string(status), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				st.switches += n
			}
		}
	}
	return st
}

func newExecuteSync(base, id string) *executeSync {
	return &executeSync{
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}},
		url:    base + "/session/" + id + "/execute/sync",
	}
}

// warmUpRounds are the untimed rounds interleave starts with.
const warmUpRounds = 50

// interleave warms all up, then times b.N rounds of one call each, who
// goes first rotating; it leaves each one's latencies sorted.
func interleave(b *testing.B, all ...*executeSync) {
	// Warm up: connections, the script path in the renderer.
	for i := 0; i < warmUpRounds; i++ {
		for _, e := range all {
			e.once(b)
		}
	}
	for _, e := range all {
		e.lat = e.lat[:0]
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range all {
			all[(i+j)%len(all)].once(b)
		}
	}
	b.StopTimer()
	for _, e := range all {
		slices.Sort(e.lat)
	}
}

// reportRatios reports the p50 and p99 of via against direct: the
// latencies (for an empty prefix) and the ratios, the metrics' names
// prefixed.
func reportRatios(b *testing.B, direct, via *executeSync, prefix string) {
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	d50, d99 := percentile(direct.lat, 50), percentile(direct.lat, 99)
	v50, v99 := percentile(via.lat, 50), percentile(via.lat, 99)
	if prefix == "" {
		b.ReportMetric(us(d50), "direct-p50-us")
		b.ReportMetric(us(d99), "direct-p99-us")
		b.ReportMetric(us(v50), "wdext-p50-us")
		b.ReportMetric(us(v99), "wdext-p99-us")
	}
	b.ReportMetric(float64(v50)/float64(d50), prefix+"p50-ratio")
	b.ReportMetric(float64(v99)/float64(d99), prefix+"p99-ratio")
}

// tcpRelay copies bytes between its clients and addr, nothing more: the
// cheapest possible extra hop, for reference. It returns its base URL.
func tcpRelay(b *testing.B, addr string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	b.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() { // owned by the cleanup above
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, u)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); io.Copy(u, c); u.Close() }()
			go func() { defer wg.Done(); io.Copy(c, u); c.Close() }()
		}
	}()
	return "http://" + l.Addr().String()
}

// serveProcess runs `wdext serve --port 0` with args, the binary bin or,
// if bin is "", one built from this checkout, until the benchmark ends,
// and returns its base URL and process id.
func serveProcess(b *testing.B, bin string, args ...string) (string, int) {
	if bin == "" {
		bin = filepath.Join(b.TempDir(), "wdext")
		if out, err := exec.Command("go", "build", "-o", bin, "github.com/wdext/wdext/cmd/wdext").CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
	}
	cmd := exec.Command(bin, append([]string{"serve", "--port", "0"}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan error, 1)
	found := make(chan string, 1)
	go func() { // owned by the cleanup below, which waits for exited
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingURL.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stderr)
		exited <- cmd.Wait()
	}()
	b.Cleanup(func() {
		// SIGTERM: wdext deletes its sessions upstream, then exits.
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	select {
	case u := <-found:
		return u, cmd.Process.Pid
	case err := <-exited:
		exited <- err
		b.Fatalf("wdext serve exited before serving: %v", err)
	case <-time.After(60 * time.Second):
		b.Fatal("wdext serve did not say where it serves")
	}
	return "", 0
}

var servingURL = regexp.MustCompile(`msg="wdext serving" url=(http://\S+)`)
