package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/wdext/wdext/engine/registry"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "serve":
		err = serve(args, registry.Kinds)
	case "census":
		err = censusCmd(args)
	case "leaks":
		err = leaksCmd(args)
	case "report":
		err = reportCmd(args)
	case "wpt":
		code, err := wptCmd(args, registry.Kinds)
		if err != nil {
			fmt.Fprintln(os.Stderr, "wdext:", err)
			code = max(code, 1)
		}
		os.Exit(code)
	case "setup":
		err = setupCmd(args)
	case "version":
		versionCmd(args)
	case "--version", "-version":
		fmt.Print(version())
	case "-h", "--help", "help":
		usage()
		return
	default:
		fmt.Fprintf(os.Stderr, "wdext: unknown command %q\n", cmd)
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wdext:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  wdext serve [flags]               serve WebDriver in front of a driver it starts (or --upstream)
  wdext wpt [flags] PATH...         run WPT-style testharness.js tests through wdext
                                    (flags and PATHs in any order; wdext wpt -h for more)
  wdext wpt serve [--wpt-root DIR] [PATH]
                                    serve a WPT tree as wdext wpt does, for a browser
                                    opened by hand, until SIGINT or SIGTERM
  wdext setup                       install testharness.js for wdext wpt, once per user
  wdext census [--breakdown JSON] FILE.heapsnapshot
                                    census of a saved V8 heap snapshot
  wdext leaks --baseline B [--target T] --final F [--iterations N] [--json]
                                    leaks between saved V8 heap snapshots (memlab's method)
  wdext report trace|census|census-diff|leaks [-o FILE.html] FILE...
                                    one self-contained HTML report (flame chart, treemap,
                                    retainer paths) of saved results; wdext wpt --html FILE
  wdext version                     wdext's version (also: wdext --version)
run "wdext COMMAND -h" for a command's flags
`)
}

func versionCmd(args []string) {
	fs := flag.NewFlagSet("version", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wdext version   (or wdext --version)")
		fs.PrintDefaults()
	}
	fs.Parse(args)
	if fs.NArg() != 0 {
		fs.Usage()
		os.Exit(2)
	}
	fmt.Print(version())
}

// version is what `wdext version` prints: the module version the binary
// was built as ("(devel)" when the build stamped none), the commit and
// its time when the build stamped them (go build in a git checkout), and
// the Go toolchain.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return formatVersion(bi)
}

func formatVersion(bi *debug.BuildInfo) string {
	v, goVersion := "(devel)", runtime.Version()
	var vcs []string
	if bi != nil {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		var rev, at, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if rev != "" {
			vcs = append(vcs, "commit "+rev)
			if at != "" {
				vcs = append(vcs, at)
			}
			if modified == "true" {
				vcs = append(vcs, "modified")
			}
		}
	}
	line := "wdext " + v
	if len(vcs) > 0 {
		line += " (" + strings.Join(vcs, ", ") + ")"
	}
	return fmt.Sprintf("%s %s %s/%s\n", line, goVersion, runtime.GOOS, runtime.GOARCH)
}
