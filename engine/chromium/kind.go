package chromium

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine/kind"
)

// Kind is Chromium to the program: chromedriver and Chromium, which wdext
// runs itself or finds behind --upstream.
var Kind = kind.Kind{
	Name:   "chromium",
	Starts: "chromedriver, which starts Chromium",
	Flags: func(fs *flag.FlagSet) kind.Launcher {
		l := &launcher{}
		fs.StringVar(&l.chromedriver, "chromedriver", "", "chromedriver binary (default: $PATH, then /usr/bin/chromedriver)")
		return l
	},
	Bind: Bind,
	WPT: kind.WPT{
		Product:      "chrome",
		Recognise:    func(name string) bool { return strings.Contains(strings.ToLower(name), "chrom") },
		Hosts:        true,
		Experimental: true,
		Capabilities: WPTCapabilities,
		// --ignore-certificate-errors-spki-list is honoured only with it.
		Profile: "--user-data-dir=",
	},
}

// launcher starts a managed chromedriver.
type launcher struct{ chromedriver string }

func (l *launcher) Launch(*slog.Logger) (kind.Managed, error) {
	path, err := FindDriver(l.chromedriver)
	if err != nil {
		return kind.Managed{}, err
	}
	if err := driver.Runnable("--chromedriver", l.chromedriver, path); err != nil {
		return kind.Managed{}, err
	}
	defaults := ManagedDefaults()
	headless := slices.ContainsFunc(defaults.Args, func(a string) bool { return strings.HasPrefix(a, "--headless") })
	d := &Driver{Path: path, Bind: Bind}
	return kind.Managed{
		Upstream: d,
		Start: func(ctx context.Context) error {
			if _, err := d.Current(ctx); err != nil {
				return fmt.Errorf("chromedriver did not start: %w", err)
			}
			return nil
		},
		Defaults: defaults,
		RunInfo:  map[string]any{"headless": headless},
	}, nil
}
