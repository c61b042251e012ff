package webkitgtk

import (
	"flag"
	"log/slog"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine/kind"
	"github.com/wdext/wdext/polyfill"
)

// Kind is WebKitGTK to the program: WebKitWebDriver and MiniBrowser, which
// wdext runs itself (one driver per session, on an Xvfb display of its
// own) or finds behind --upstream.
var Kind = kind.Kind{
	Name:   "webkitgtk",
	Starts: "WebKitWebDriver and MiniBrowser on an Xvfb display of its own",
	Flags: func(fs *flag.FlagSet) kind.Launcher {
		l := &launcher{}
		fs.StringVar(&l.driver, "webkitwebdriver", "", "WebKitWebDriver binary for --engine webkitgtk (default: $PATH, then /usr/bin/WebKitWebDriver)")
		return l
	},
	Bind:     BindRemote,
	Commands: []kind.Command{newWindow},
	WPT: kind.WPT{
		Product:   "webkitgtk",
		Recognise: IsBrowser,
		// Each document carries the Profiler polyfill and its
		// Document-Policy, before its own scripts: on https there is no
		// injecting proxy, and the inspector tells the policy only once
		// the document's context exists.
		Document:     InjectProfiler,
		Capabilities: WPTCapabilities,
	},
}

// launcher starts WebKitWebDriver per session.
type launcher struct{ driver string }

func (l *launcher) Launch(log *slog.Logger) (kind.Managed, error) {
	path, err := Find(l.driver)
	if err != nil {
		return kind.Managed{}, err
	}
	if err := driver.Runnable("--webkitwebdriver", l.driver, path); err != nil {
		return kind.Managed{}, err
	}
	// Every document gets the Profiler polyfill first (forcesample works
	// through it).
	return kind.Managed{Upstream: &Upstream{Driver: path, Inject: polyfill.Script("Profiler"), Log: log}}, nil
}

// WPTCapabilities are what a WebKitGTK session needs to run tests served
// as s says: with an HTTPS server, acceptInsecureCerts, which WebKitGTK
// applies to the session's whole network, workers included (its
// alternative, webkitgtk:browserOptions certificates, takes a certificate
// file per host name).
//
// WebKitGTK cannot be told to resolve WPT's host names, so it needs the
// loopback mode (kind.WPT.Hosts false) unless the machine's /etc/hosts
// maps them, as wptrunner asks of WebKitGTK users. A proxy does not get
// around it (measured with WebKitWebDriver 2.50): its proxy capability's
// sslProxy is reached over TLS and the proxy's certificate checked
// against the system's CAs whatever acceptInsecureCerts says, https
// requests do not go through an httpProxy, and a socksProxy is never used.
func WPTCapabilities(s kind.Served) map[string]any {
	caps := map[string]any{}
	if s.SPKIHash != "" {
		caps["acceptInsecureCerts"] = true
	}
	return caps
}
