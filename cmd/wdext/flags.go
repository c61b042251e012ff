package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine/kind"
)

// serverFlags are the flags of everything that runs a wdext server:
// driverFlags choose the browser and how it is driven (serve and wpt),
// listenFlags how the server faces its clients (serve only: wpt's server is
// its own, on a loopback port only its runner uses).
type serverFlags struct {
	driverFlags
	listenFlags
}

// driverFlags choose the upstream: --upstream's driver, or the one the
// --engine kind starts (with the kind's own flags, in launchers).
type driverFlags struct {
	kinds     kind.List
	upstream  string
	engine    string
	launchers map[string]kind.Launcher
	logLevel  string
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

func (f *serverFlags) register(fs *flag.FlagSet, kinds kind.List) {
	f.driverFlags.register(fs, kinds)
	f.listenFlags.register(fs)
}

func (f *driverFlags) register(fs *flag.FlagSet, kinds kind.List) {
	f.kinds = kinds
	fs.StringVar(&f.upstream, "upstream", "", "URL of a running WebDriver server or grid to front (default: start the --engine's driver)")
	var engines []string
	for _, k := range kinds {
		engines = append(engines, fmt.Sprintf("%s (%s)", k.Name, k.Starts))
	}
	fs.StringVar(&f.engine, "engine", kinds[0].Name, "browser wdext starts when there is no --upstream: "+strings.Join(engines, ", or "))
	f.launchers = map[string]kind.Launcher{}
	for _, k := range kinds {
		f.launchers[k.Name] = k.Flags(fs)
	}
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

// kind is the --engine kind.
func (f *driverFlags) kind() (kind.Kind, error) { return f.kinds.Find(f.engine) }

// managed says whether wdext runs the driver itself (no --upstream).
func (f *driverFlags) managed() bool { return f.upstream == "" }

// launch returns the upstream the flags choose, not started yet, and the
// commands its sessions need on top of forwarding.
func (f *driverFlags) launch(log *slog.Logger) (kind.Managed, []kind.Command, error) {
	k, err := f.kind()
	if err != nil {
		return kind.Managed{}, nil, err
	}
	if !f.managed() {
		u, err := url.Parse(f.upstream)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return kind.Managed{}, nil, fmt.Errorf("--upstream %q is not an absolute URL", f.upstream)
		}
		// Any browser may answer: every kind's binder, in turn.
		return kind.Managed{Upstream: driver.Remote{URL: u, Bind: f.kinds.Bind()}}, nil, nil
	}
	m, err := f.launchers[k.Name].Launch(log)
	return m, k.Commands, err
}

func (f *driverFlags) logger() (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})), nil
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
