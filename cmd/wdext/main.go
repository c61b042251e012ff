package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "serve":
		err = serve(args)
	case "census":
		err = censusCmd(args)
	case "wpt":
		var code int
		code, err = wptCmd(args)
		if err == nil && code != 0 {
			os.Exit(code)
		}
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
  wdext serve [flags]               serve WebDriver in front of chromedriver (or --upstream)
  wdext wpt [flags] PATHS...        run WPT-style testharness.js suites through wdext
  wdext census [--breakdown JSON] FILE.heapsnapshot
                                    census of a saved V8 heap snapshot
run "wdext COMMAND -h" for a command's flags
`)
}
