package webkitgtk

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/internal/procgroup"
	"github.com/wdext/wdext/polyfill"
	"github.com/wdext/wdext/wire"
)

// BrowserName is the browserName WebKitWebDriver reports for MiniBrowser.
const BrowserName = "MiniBrowser"

// IsBrowser reports whether a session's browserName is a WebKitGTK
// browser's.
func IsBrowser(browserName string) bool {
	switch strings.ToLower(browserName) {
	case "minibrowser", "webkitgtk", "epiphany", "cog":
		return true
	}
	return false
}

// Find returns explicit if set, else WebKitWebDriver from $PATH, else
// /usr/bin/WebKitWebDriver.
func Find(explicit string) (string, error) {
	return driver.Find(explicit, "WebKitWebDriver", "pass --webkitwebdriver, put it on $PATH, or install webkit2gtk-driver")
}

// FindXvfb returns Xvfb from $PATH or /usr/bin/Xvfb.
func FindXvfb() (string, error) { return driver.Find("", "Xvfb", "install xvfb") }

// Upstream runs WebKitGTK for wdext: one Xvfb display, started on first
// use, and one WebKitWebDriver (with its MiniBrowser) per session. It
// implements driver.PerSession.
type Upstream struct {
	// Driver is the WebKitWebDriver binary; Xvfb the X server. Empty: Find
	// and FindXvfb.
	Driver, Xvfb string
	// Display, if set (":0"), is used instead of starting Xvfb.
	Display string
	// StartTimeout bounds a driver's start (default 20 s);
	// NewSessionTimeout bounds POST /session (default 30 s): the driver
	// hangs forever when the browser fails to start.
	StartTimeout, NewSessionTimeout time.Duration
	// Stderr, if set, receives the processes' output as well.
	Stderr *os.File
	// Log receives what goes wrong outside a request; nil: slog's default.
	Log *slog.Logger
	// Inject, if set, is a script every document of the sessions runs
	// first, in every frame (polyfill.Script): the inspector's bootstrap
	// script, and wdext's injecting proxy as the sessions' proxy
	// capability unless the client asked for a proxy itself; and every
	// dedicated worker runs it first too. It must be the Profiler
	// polyfill's: the pages' agents tell it Document-Policy and deliver
	// periodic samples to it (see the package documentation).
	Inject string

	mu       sync.Mutex
	closed   bool
	xvfb     *proc
	display  string
	sessions map[string]*proc
	pending  map[*proc]bool
	injector *injector
}

// proc is one process group wdext started.
type proc struct {
	group *procgroup.Group
	// done is closed when the leader has exited (kill waits for the rest).
	done <-chan struct{}
	log  *tail
	url  *url.URL
	// browser is the browser group a driver is attached to, killed with
	// it.
	browser *proc
	// client is a browser's inspector client, closed when it is killed.
	client io.Closer
	killed sync.Once
}

// Managed is true: wdext owns the drivers and browsers.
func (u *Upstream) Managed() bool { return true }

func (u *Upstream) String() string { return "managed " + u.Driver + " (one per session)" }

// Current is for commands of sessions wdext does not know: there is no
// shared driver to send them to.
func (u *Upstream) Current(context.Context) (*driver.Instance, error) {
	return nil, errors.New("WebKitWebDriver holds one session per driver: no shared driver")
}

// Ready is true unless closed: drivers start per session.
func (u *Upstream) Ready(context.Context) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return !u.closed
}

// StartSession starts a WebKitWebDriver on a free loopback port, on the
// display, and returns it once its /status is ready.
func (u *Upstream) StartSession(ctx context.Context, req map[string]any) (*driver.Instance, time.Duration, func(string, error), error) {
	b, p, err := u.startBrowserAndDriver(ctx, req)
	if err != nil {
		return nil, 0, nil, err
	}
	if err := u.addPending(p); err != nil {
		p.kill()
		return nil, 0, nil, err
	}
	if err := p.waitReady(ctx, orDefault(u.StartTimeout, 20*time.Second)); err != nil {
		u.mu.Lock()
		delete(u.pending, p)
		u.mu.Unlock()
		p.kill()
		return nil, 0, nil, err
	}
	bindEngine := func(_ context.Context, s engine.NewSession) (engine.Engine, error) {
		return &Engine{driver: nudgingDriver{s.Driver, b.inspector}, inspector: b.inspector, agents: b.agents, browserName: browserName(s.Capabilities)}, nil
	}
	return &driver.Instance{URL: p.url, Done: p.done, Bind: bindEngine}, orDefault(u.NewSessionTimeout, 30*time.Second), u.bindSession(p, b), nil
}

// startBrowserAndDriver starts, for one new session, MiniBrowser on the
// display (with the injecting proxy when asked for) and a WebKitWebDriver
// attached to it on a free loopback port. wdext starts the browser itself,
// so that it can serve its remote inspector (the memory commands' way in).
func (u *Upstream) startBrowserAndDriver(ctx context.Context, req map[string]any) (*browser, *proc, error) {
	display, err := u.ensureDisplay(ctx)
	if err != nil {
		return nil, nil, err
	}
	if u.Inject != "" {
		addr, err := u.ensureInjector()
		if err != nil {
			return nil, nil, err
		}
		addProxy(req, addr)
	}
	path, err := Find(u.Driver)
	if err != nil {
		return nil, nil, err
	}
	l, err := takeBrowserOptions(req)
	if err != nil {
		return nil, nil, wire.Errorf(wire.InvalidArgument, "%v", err)
	}
	b, err := u.startBrowser(ctx, display, l, orDefault(u.StartTimeout, 20*time.Second))
	if err != nil {
		return nil, nil, err
	}
	// The port is picked just before the driver binds it: picked before
	// the browser's start (seconds), another process took it meanwhile
	// once ("Unable to listen for HTTP server", CI under load).
	port, err := driver.FreePort()
	if err != nil {
		b.kill()
		return nil, nil, err
	}
	cmd := exec.Command(path, "--port="+strconv.Itoa(port), "--host=127.0.0.1", "--target="+b.automation)
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	p, err := u.startProc(cmd)
	if err != nil {
		b.kill()
		return nil, nil, err
	}
	p.url = &url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	p.browser = b.proc
	go func() { // owned by the browser process: ends when it exits
		// A browser that dies takes its driver along, so that the session
		// answers "invalid session id" rather than errors of a driver
		// talking to nobody.
		<-b.done
		p.kill()
	}()
	return b, p, nil
}

// addPending records p as a driver whose session is not yet bound, unless
// u is shutting down.
func (u *Upstream) addPending(p *proc) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return errors.New("shutting down")
	}
	if u.pending == nil {
		u.pending = map[*proc]bool{}
	}
	u.pending[p] = true
	return nil
}

// bindSession returns StartSession's bind: once the new session has an
// id, p becomes that session's driver, until it exits; a session that
// failed (id "") or came too late (u closed) kills p.
func (u *Upstream) bindSession(p *proc, b *browser) func(string, error) {
	var once sync.Once
	return func(id string, failure error) {
		once.Do(func() {
			u.mu.Lock()
			delete(u.pending, p)
			if id != "" && !u.closed {
				if u.sessions == nil {
					u.sessions = map[string]*proc{}
				}
				u.sessions[id] = p
				u.mu.Unlock()
				u.bootstrap(b)
				go func() { // owned by the driver process: ends when it exits
					// A driver that dies by itself leaves MiniBrowser
					// running: take the rest of its group down too.
					<-p.done
					u.mu.Lock()
					if u.sessions[id] == p {
						delete(u.sessions, id)
					}
					u.mu.Unlock()
					p.kill()
				}()
				return
			}
			u.mu.Unlock()
			p.kill()
		})
	}
}

// bootstrap makes the inspector run the injected script first in every
// frame of the session's first window, whatever the document's scheme,
// origin or Content-Security-Policy (New Window prepares the others; see
// Register). It runs once the session exists, before
// the client hears of it: a Page.enable sent before the automation session
// exists is never answered, not even after (measured). It takes ~250 ms,
// ~200 of them Page.enable's.
func (u *Upstream) bootstrap(b *browser) {
	if u.Inject == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The bootstrap script also tells the polyfill that the page's agent
	// delivers periodic samples (see agent).
	if err := b.inspector.SetBootstrap(ctx, u.Inject+"\n"+polyfill.EnableSamplerScript, b.pages); err != nil {
		u.logger().Warn("the polyfill is injected by the proxy only (http documents): setting it as the inspector's bootstrap script failed", "err", err)
		return
	}
	if err := b.agents.wait(ctx); err != nil {
		u.logger().Warn("arming the inspector for the polyfill", "err", err)
	}
}

func (u *Upstream) logger() *slog.Logger {
	if u.Log != nil {
		return u.Log
	}
	return slog.Default()
}

// Why returns the last lines the driver and browser of a failed start
// wrote, for error messages.
func (p *proc) why() string { return p.log.String() }

// EndSession stops the driver (and browser) that held session id.
func (u *Upstream) EndSession(id string) {
	u.mu.Lock()
	p := u.sessions[id]
	delete(u.sessions, id)
	u.mu.Unlock()
	if p != nil {
		p.kill()
	}
}

// Close stops every driver, browser and the display.
func (u *Upstream) Close() error {
	u.mu.Lock()
	u.closed = true
	var ps []*proc
	for _, p := range u.sessions {
		ps = append(ps, p)
	}
	for p := range u.pending {
		ps = append(ps, p)
	}
	u.sessions, u.pending = nil, nil
	x := u.xvfb
	u.xvfb = nil
	inj := u.injector
	u.injector = nil
	u.mu.Unlock()
	if inj != nil {
		defer inj.close()
	}
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Add(1)
		go func() { // owned by Close, which waits
			defer wg.Done()
			p.kill()
		}()
	}
	wg.Wait()
	if x != nil {
		x.kill()
	}
	return nil
}

// Sessions is the number of drivers holding a session.
func (u *Upstream) Sessions() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.sessions)
}

// ensureDisplay starts Xvfb on a free display number (-displayfd) once.
func (u *Upstream) ensureDisplay(ctx context.Context) (string, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return "", errors.New("shutting down")
	}
	if u.Display != "" {
		return u.Display, nil
	}
	if u.xvfb != nil {
		select {
		case <-u.xvfb.done:
			u.xvfb = nil
		default:
			return u.display, nil
		}
	}
	path := u.Xvfb
	if path == "" {
		var err error
		if path, err = FindXvfb(); err != nil {
			return "", err
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return "", err
	}
	defer r.Close()
	cmd := exec.Command(path, "-displayfd", "3", "-screen", "0", "1280x1024x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	p, err := u.startProc(cmd)
	w.Close()
	if err != nil {
		return "", err
	}
	type result struct {
		n   string
		err error
	}
	got := make(chan result, 1)
	go func() { // owned by ensureDisplay: ends when Xvfb writes or the pipe closes (r.Close, kill)
		line, err := bufio.NewReader(r).ReadString('\n')
		got <- result{strings.TrimSpace(line), err}
	}()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case res := <-got:
		if res.err != nil || res.n == "" {
			p.kill()
			return "", fmt.Errorf("the X server (Xvfb) did not report a display: %v %s", res.err, p.why())
		}
		u.xvfb, u.display = p, ":"+res.n
		return u.display, nil
	case <-ctx.Done():
		p.kill()
		<-got
		return "", ctx.Err()
	case <-timer.C:
		p.kill()
		<-got
		return "", fmt.Errorf("the X server (Xvfb) did not report a display in 10s: %s", p.why())
	}
}

// startProc starts cmd in a process group of its own (see
// internal/procgroup), its output kept.
func (u *Upstream) startProc(cmd *exec.Cmd) (*proc, error) {
	p := &proc{log: &tail{max: 4096}}
	if u.Stderr != nil {
		cmd.Stdout = multi{p.log, u.Stderr}
	} else {
		cmd.Stdout = p.log
	}
	cmd.Stderr = cmd.Stdout
	// The browser inherits the output pipe: without a bound, Wait would
	// wait for the whole group, not for the driver.
	cmd.WaitDelay = 200 * time.Millisecond
	g, err := procgroup.Start(cmd)
	if err != nil {
		return nil, err
	}
	p.group, p.done = g, g.Exited()
	return p, nil
}

func (p *proc) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := driver.StatusReady(ctx, p.url)
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("WebKitWebDriver exited before it was ready: %s", p.why())
		case <-ctx.Done():
			return fmt.Errorf("WebKitWebDriver not ready after %v: %v", timeout, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// kill ends the process group (driver, MiniBrowser, its web and network
// processes; see internal/procgroup) and what depends on it: the
// inspector client, the browser a driver is attached to.
func (p *proc) kill() {
	p.killed.Do(func() {
		p.group.Kill()
		if p.client != nil {
			p.client.Close()
		}
		if p.browser != nil {
			p.browser.kill()
		}
	})
	<-p.done
}

// orDefault is d, or def when d is not set.
func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(bytes.TrimSpace(t.buf))
	if s == "" {
		return "(no output)"
	}
	return "output: " + s
}

type multi struct {
	a *tail
	b *os.File
}

func (m multi) Write(p []byte) (int, error) {
	m.a.Write(p)
	m.b.Write(p)
	return len(p), nil
}

// ensureInjector starts the injecting proxy once.
func (u *Upstream) ensureInjector() (string, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return "", errors.New("shutting down")
	}
	if u.injector == nil {
		in, err := newInjector(u.Inject)
		if err != nil {
			return "", err
		}
		u.injector = in
	}
	return u.injector.addr(), nil
}

// addProxy makes the injector the session's http proxy, in alwaysMatch,
// unless the request names a proxy anywhere.
func addProxy(req map[string]any, addr string) {
	caps, _ := req["capabilities"].(map[string]any)
	if caps == nil {
		caps = map[string]any{}
		req["capabilities"] = caps
	}
	always, _ := caps["alwaysMatch"].(map[string]any)
	if always == nil {
		always = map[string]any{}
		caps["alwaysMatch"] = always
	}
	if _, ok := always["proxy"]; ok {
		return
	}
	first, _ := caps["firstMatch"].([]any)
	for _, f := range first {
		if m, ok := f.(map[string]any); ok && m["proxy"] != nil {
			return
		}
	}
	always["proxy"] = map[string]any{"proxyType": "manual", "httpProxy": addr}
}
