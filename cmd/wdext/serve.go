package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/engine/webkitgtk"
	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/internal/procgroup"
	"github.com/wdext/wdext/memory"
	"github.com/wdext/wdext/memory/debuggermemory"
	"github.com/wdext/wdext/memory/leakcheck"
	"github.com/wdext/wdext/polyfill"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
)

// serverFlags are the flags of everything that runs a wdext server:
// driverFlags choose the browser and how it is driven (serve and wpt),
// listenFlags how the server faces its clients (serve only: wpt's server is
// its own, on a loopback port only its runner uses).
type serverFlags struct {
	driverFlags
	listenFlags
}

type driverFlags struct {
	upstream, chromedriver string
	engine, webkitDriver   string
	logLevel               string
}

type listenFlags struct {
	host                         string
	allowedHosts, allowedOrigins string
	maxBody                      int64
	sessionTimeout               time.Duration
	maxSessions                  int
}

// defaultListen is listenFlags' defaults, what a server without those
// flags (wpt's) runs with.
var defaultListen = listenFlags{host: "127.0.0.1", maxBody: 256 << 20}

func (f *serverFlags) register(fs *flag.FlagSet) {
	f.driverFlags.register(fs)
	f.listenFlags.register(fs)
}

func (f *driverFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.upstream, "upstream", "", "URL of a running WebDriver server or grid to front (default: start chromedriver)")
	fs.StringVar(&f.engine, "engine", "chromium", "browser wdext starts when there is no --upstream: chromium or webkitgtk (WebKitWebDriver and MiniBrowser on an Xvfb display of its own)")
	fs.StringVar(&f.webkitDriver, "webkitwebdriver", "", "WebKitWebDriver binary for --engine webkitgtk (default: $PATH, then /usr/bin/WebKitWebDriver)")
	fs.StringVar(&f.chromedriver, "chromedriver", "", "chromedriver binary (default: $PATH, then /usr/bin/chromedriver)")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
}

func (f *listenFlags) register(fs *flag.FlagSet) {
	d := defaultListen
	fs.StringVar(&f.host, "host", d.host, "address to listen on")
	fs.StringVar(&f.allowedHosts, "allowed-hosts", d.allowedHosts, "comma-separated host names accepted in the Host header besides IP addresses and localhost")
	fs.StringVar(&f.allowedOrigins, "allowed-origins", d.allowedOrigins, "comma-separated Origin values accepted (default: none)")
	fs.Int64Var(&f.maxBody, "max-body", d.maxBody, "largest request body in bytes")
	fs.DurationVar(&f.sessionTimeout, "session-timeout", d.sessionTimeout, "delete sessions idle longer than this (0: never)")
	fs.IntVar(&f.maxSessions, "max-sessions", d.maxSessions, "most sessions at once: beyond it New Session is 'session not created' and /status says ready false (0: no limit)")
}

// stack is a wdext server with its upstream, ready to serve.
type stack struct {
	server   *webdriver.Server
	upstream driver.Upstream
	log      *slog.Logger
}

func (f *serverFlags) build() (*stack, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	// A wdext killed outright (the OOM killer, a CI timeout) leaves its
	// browsers running: the next one ends them.
	if procs, dirs := procgroup.Sweep(); procs+dirs > 0 {
		log.Info("ended what a killed wdext left", "processes", procs, "directories", dirs)
	}
	var up driver.Upstream
	var defaults webdriver.SessionDefaults
	// extra are the commands an engine adds on top of plain forwarding.
	var extra []func(*webdriver.Server)
	if f.upstream != "" {
		u, err := url.Parse(f.upstream)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("--upstream %q is not an absolute URL", f.upstream)
		}
		// Any browser may answer: every engine's binder, in turn.
		up = driver.Remote{URL: u, Bind: remoteEngines}
	} else if f.engine == "webkitgtk" {
		path, err := webkitgtk.Find(f.webkitDriver)
		if err != nil {
			return nil, err
		}
		if err := runnable("--webkitwebdriver", f.webkitDriver, path); err != nil {
			return nil, err
		}
		// Every document gets the Profiler polyfill first (forcesample
		// works through it).
		up = &webkitgtk.Upstream{Driver: path, Inject: polyfill.Script("Profiler"), Log: log}
		extra = append(extra, webkitgtk.Register)
	} else if f.engine != "chromium" {
		return nil, fmt.Errorf("--engine %q: want chromium or webkitgtk", f.engine)
	} else {
		path, err := driver.FindChromedriver(f.chromedriver)
		if err != nil {
			return nil, err
		}
		if err := runnable("--chromedriver", f.chromedriver, path); err != nil {
			return nil, err
		}
		up = &driver.Chromedriver{Path: path, Bind: chromium.Bind}
		bin, args := driver.ChromeMachineDefaults()
		defaults = chromium.Defaults{Binary: bin, Args: args}
	}
	srv := webdriver.NewServer(webdriver.Config{
		Upstream: up,
		Sessions: session.NewRegistry(),
		Defaults: defaults,
		Guard: webdriver.Guard{
			AllowedHosts:   splitList(f.allowedHosts),
			AllowedOrigins: splitList(f.allowedOrigins),
			MaxBody:        f.maxBody,
		},
		Log:         log,
		MaxSessions: f.maxSessions,
	})
	for _, register := range extra {
		register(srv)
	}
	forcesample.Register(srv)
	memory.Register(srv)
	debuggermemory.Register(srv)
	leakcheck.Register(srv)
	return &stack{server: srv, upstream: up, log: log}, nil
}

// run serves on l until ctx ends, then deletes every session, stops the
// driver and returns.
func (st *stack) run(ctx context.Context, l net.Listener, sessionTimeout time.Duration) error {
	hs := &http.Server{
		Handler:           st.server,
		ReadHeaderTimeout: 10 * time.Second,
		// No ReadTimeout: it would bound the upload of a large body as a
		// whole. The Guard bounds a body's inactivity instead.
		IdleTimeout: 2 * time.Minute,
		// WebDriver requests carry a few short headers; net/http's default
		// (1 MiB) is room a hostile client could multiply by connections.
		MaxHeaderBytes: 64 << 10,
	}
	bg, stopBG := context.WithCancel(ctx)
	defer stopBG()
	if sessionTimeout > 0 {
		go st.server.ExpireIdle(bg, sessionTimeout) // owned by run: stopped by stopBG
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(webdriver.ErrorListener(l)) }() // owned by run: ends at hs.Shutdown
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	st.log.Info("shutting down", "sessions", st.server.Sessions().Len())
	stopBG()
	done, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st.server.Shutdown(done)
	hs.Shutdown(done)
	st.upstream.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	var f serverFlags
	f.register(fs)
	port := fs.Int("port", 4444, "port to listen on (0: any free port)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wdext serve [flags]   (WebDriver on http://127.0.0.1:4444 in front of chromedriver, or --upstream)")
		fs.PrintDefaults()
	}
	fs.Parse(args)
	if fs.NArg() != 0 {
		fmt.Fprintf(fs.Output(), "wdext serve takes no arguments, got %q\n", fs.Args())
		fs.Usage()
		os.Exit(2)
	}

	st, err := f.build()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Start the driver before listening: a driver that cannot start is an
	// error now, not in every new session later, and the first session
	// doesn't pay for the start.
	if m, ok := st.upstream.(*driver.Chromedriver); ok {
		if err := startChromedriver(ctx, m); err != nil {
			st.upstream.Close()
			if ctx.Err() != nil {
				return nil // interrupted while starting
			}
			return err
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort(f.host, fmt.Sprint(*port)))
	if err != nil {
		st.upstream.Close()
		return err
	}
	st.log.Info("wdext serving", "url", "http://"+l.Addr().String(), "upstream", describe(st.upstream))
	return st.run(ctx, l, f.sessionTimeout)
}

// runnable returns why the driver binary path (found by the default
// lookup, or given as flag = explicit) cannot be run, or nil.
func runnable(flag, explicit, path string) error {
	what := flag + " " + path
	if explicit == "" {
		what = path + " (found on $PATH or in /usr/bin; " + flag + " to choose another)"
	}
	if !strings.Contains(path, "/") {
		// A bare name, as exec.Command runs it: from $PATH.
		p, err := exec.LookPath(path)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		path = p
	}
	fi, err := os.Stat(path)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("%s: %w", what, pe.Err)
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	case fi.IsDir():
		return fmt.Errorf("%s: is a directory", what)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s: not a regular file (%v)", what, fi.Mode())
	}
	if err := syscall.Access(path, 1 /* X_OK */); err != nil {
		return fmt.Errorf("%s: not executable (%v): %w", what, fi.Mode(), err)
	}
	return nil
}

// startChromedriver starts m's first chromedriver; its failure names
// what the driver printed.
func startChromedriver(ctx context.Context, m *driver.Chromedriver) error {
	if _, err := m.Current(ctx); err != nil {
		return fmt.Errorf("chromedriver did not start: %w", err)
	}
	return nil
}

// remoteEngines binds the engine of a remote upstream's session: the
// first engine whose binder recognises the browser. A new engine adds its
// binder here.
var remoteEngines = engine.First(chromium.Bind, webkitgtk.BindRemote)

func describe(up driver.Upstream) string {
	if s, ok := up.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", up)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
