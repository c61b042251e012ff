package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/wdext/wdext/memory/census"
)

// censusCmd runs a Debugger.Memory-style census on a saved V8 heap
// snapshot (DevTools, memlab, HeapProfiler.takeHeapSnapshot) or
// JavaScriptCore one (the WebKit inspector's Heap.snapshot snapshotData).
func censusCmd(args []string) error {
	fs := flag.NewFlagSet("census", flag.ExitOnError)
	breakdown := fs.String("breakdown", "", `takeCensus breakdown as JSON, e.g. '{"by":"objectClass"}' (default: the documented default)`)
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: wdext census [--breakdown JSON] FILE (a V8 .heapsnapshot or JavaScriptCore snapshot JSON)")
		fs.PrintDefaults()
	}
	fs.Parse(args)
	if fs.NArg() != 1 {
		fs.Usage()
		os.Exit(2)
	}
	return census.RunFile(fs.Arg(0), *breakdown, os.Stdout)
}
