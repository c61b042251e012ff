package firefox

import (
	"flag"
	"log/slog"
	"strings"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine/kind"
	"github.com/wdext/wdext/polyfill"
)

// Kind is Firefox to the program: firefox-esr, which wdext runs itself
// (one per session) and drives through Marionette, or finds behind
// --upstream (geckodriver), where only forwarding is served.
var Kind = kind.Kind{
	Name:   "firefox",
	Starts: "firefox-esr, headless, one per session, driven through Marionette",
	Flags: func(fs *flag.FlagSet) kind.Launcher {
		l := &launcher{}
		fs.StringVar(&l.binary, "firefox", "", "Firefox binary for --engine firefox (default: firefox-esr, then firefox, on $PATH or in /usr/bin)")
		return l
	},
	Bind: BindRemote,
	WPT: kind.WPT{
		Product:   "firefox",
		Recognise: IsBrowser,
		// Each document runs the Profiler polyfill first (a preload
		// script); the served document tells it its Document-Policy,
		// which a preload script cannot know.
		Document:     polyfill.InjectPolicy,
		Hosts:        true,
		Capabilities: WPTCapabilities,
	},
}

// launcher starts Firefox per session.
type launcher struct{ binary string }

func (l *launcher) Launch(*slog.Logger) (kind.Managed, error) {
	path, err := Find(l.binary)
	if err != nil {
		return kind.Managed{}, err
	}
	if err := driver.Runnable("--firefox", l.binary, path); err != nil {
		return kind.Managed{}, err
	}
	up := &Upstream{Binary: path}
	return kind.Managed{Upstream: up, RunInfo: map[string]any{"headless": true}}, nil
}

// WPTCapabilities are what a Firefox session needs to run tests served as
// s says: WPT's host names resolved to loopback through the
// network.dns.localDomains pref, as wptrunner sets it, and the server's
// certificate accepted (acceptInsecureCerts: Firefox has no SPKI list).
func WPTCapabilities(s kind.Served) map[string]any {
	caps := map[string]any{"browserName": BrowserName}
	if s.SPKIHash != "" {
		caps["acceptInsecureCerts"] = true
	}
	if s.Hosts && len(s.HostNames) > 0 {
		caps[optionsCap] = map[string]any{"prefs": map[string]any{
			"network.dns.localDomains": strings.Join(s.HostNames, ","),
		}}
	}
	return caps
}
