package kind

import (
	"context"
	"flag"
	"log/slog"
	"net/http"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/session"
)

// Kind is an engine as the program knows it. Each engine package exports
// one, and the registration list names it once.
type Kind struct {
	// Name is the engine's --engine value ("chromium").
	Name string
	// Starts says, for --engine's help, what wdext starts for it.
	Starts string
	// Flags registers the kind's own flags on fs (where its binaries
	// are) and returns what starts its driver with them.
	Flags func(fs *flag.FlagSet) Launcher
	// Bind recognises the kind's sessions on a driver wdext did not start
	// (--upstream) and makes their engine; it declines the others.
	Bind engine.Binder
	// Commands are what the kind's sessions need on top of forwarding.
	Commands []Command
	// WPT is how wdext wpt runs tests on the kind's browser.
	WPT WPT
}

// A Launcher starts a kind's driver and browsers for a wdext that runs
// them itself.
type Launcher interface {
	// Launch checks the flags and returns the upstream, not started yet.
	Launch(log *slog.Logger) (Managed, error)
}

// Managed is a driver wdext runs itself.
type Managed struct {
	Upstream driver.Upstream
	// Defaults, if set, add what this machine needs to every new-session
	// request.
	Defaults driver.Defaults
	// Start, if set, starts a driver the sessions share before wdext
	// listens: one that cannot start is one error then, not one per
	// session.
	Start func(ctx context.Context) error
	// RunInfo, if set, are keys the kind adds to a WPT report's run_info
	// ("headless").
	RunInfo map[string]any
}

// Command is a WebDriver command a kind adds: Run answers method Path
// (a URI template with {id}) for a session of the kind.
type Command struct {
	Method, Path string
	Run          func(ctx context.Context, sess *session.Session, body []byte) (any, error)
}

// WPT is what wdext wpt needs to run tests on a kind's browser.
type WPT struct {
	// Product is wptrunner's name for the browser ("chrome"): it picks
	// the default expectations file and goes into run_info.
	Product string
	// Recognise reports whether a session's browserName is the kind's
	// browser, for a run on --upstream.
	Recognise func(browserName string) bool
	// Hosts says whether the browser can be told to resolve WPT's host
	// names (web-platform.test, www1.…) to loopback; without, tests run
	// on localhost origins.
	Hosts bool
	// Document, if set, rewrites every HTML document the WPT server
	// serves, before its own scripts run.
	Document func(body []byte, header http.Header) []byte
	// Experimental says whether the browser has experimental web
	// platform features for --enable-experimental to turn on.
	Experimental bool
	// Capabilities are what a new session needs to run tests on a server
	// as served says.
	Capabilities func(served Served) map[string]any
	// Profile, if set, is the switch that, followed by a directory, starts
	// the browser with a profile of its own ("--user-data-dir="): wdext
	// wpt serve puts it in the command line it suggests, since the
	// switches of Capabilities' vendor "args" take effect only in a
	// browser of their own.
	Profile string
}

// Served is what a kind's WPT capabilities depend on.
type Served struct {
	// Hosts: WPT's host names are to resolve to loopback; HostNames are
	// those names (the ones that resolve: "nonexistent.…" must not).
	Hosts     bool
	HostNames []string
	// SPKIHash is the base64 SHA-256 of the HTTPS certificate's key, or ""
	// when the server has no HTTPS.
	SPKIHash string
	// Experimental: --enable-experimental was given.
	Experimental bool
}
