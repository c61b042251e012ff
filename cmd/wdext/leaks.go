package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/memory/leaks"
	"github.com/wdext/wdext/report"
	"github.com/wdext/wdext/wire"
)

// leaksCmd finds leaks in saved V8 heap snapshots with memlab's
// three-snapshot method (the flags of memlab find-leaks): what was
// allocated between the baseline and the target and is still alive in
// the final snapshot.
func leaksCmd(args []string) error {
	fs := flag.NewFlagSet("leaks", flag.ExitOnError)
	baseline := fs.String("baseline", "", "the heap before the action (a V8 .heapsnapshot)")
	target := fs.String("target", "", "the heap after the action (optional: without it, what is new in the final heap)")
	final := fs.String("final", "", "the heap after the action was undone")
	n := fs.Int("iterations", 1, "times the action ran between baseline and final: from 2, only groups that grew by a multiple of it are leaks; with 1, memlab's default rules (detached DOM nodes, unmounted React fibers)")
	asJSON := fs.Bool("json", false, "print the verdict as JSON (the leaks/stop command's shape)")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: wdext leaks --baseline B [--target T] --final F [--iterations N] [--json]")
		fs.PrintDefaults()
	}
	fs.Parse(args)
	if fs.NArg() != 0 || *baseline == "" || *final == "" {
		fs.Usage()
		os.Exit(2)
	}
	if *n < 1 {
		return fmt.Errorf("--iterations must be at least 1, not %d", *n)
	}
	limitMemory(*baseline, *target, *final)
	// One snapshot in memory at a time: of the baseline and the target,
	// the check keeps a summary (their ids and collection sizes).
	// One iteration cannot tell a leak from a structure made anew: memlab's
	// own rules judge then.
	in := leaks.Input{Iterations: *n, MemlabRules: *n == 1}
	var err error
	if in.Baseline, err = summarize(*baseline); err != nil {
		return err
	}
	if *target != "" {
		if in.Target, err = summarize(*target); err != nil {
			return err
		}
	}
	if in.Final, err = readSnapshot(*final); err != nil {
		return err
	}
	r, err := leaks.Find(in)
	if err != nil {
		return err
	}
	if *asJSON {
		e := json.NewEncoder(os.Stdout)
		e.SetIndent("", "  ")
		return e.Encode(r)
	}
	return printLeaks(os.Stdout, r)
}

// limitMemory makes the garbage collector keep the heap under 1.75 times
// the largest snapshot file (a parsed snapshot and what the check adds
// take about 1.5 times its file), unless GOMEMLIMIT says otherwise: left
// to its default, it lets the heap grow to twice what is live.
func limitMemory(paths ...string) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	var largest int64
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			largest = max(largest, fi.Size())
		}
	}
	debug.SetMemoryLimit(max(largest*7/4, 64<<20))
}

func summarize(path string) (*leaks.Summary, error) {
	s, err := readSnapshot(path)
	if err != nil {
		return nil, err
	}
	sum := leaks.Summarize(s)
	// The snapshot is garbage now: give its memory back before the next
	// one is read, so that the peak is one snapshot's.
	debug.FreeOSMemory()
	return sum, nil
}

func readSnapshot(path string) (*heapsnapshot.Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := heapsnapshot.Read(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// printLeaks writes a report for people.
func printLeaks(w io.Writer, r wire.LeakReport) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%d iteration(s); heap %s before, %s after\n", r.Iterations, report.ByteSize(r.BytesBefore), report.ByteSize(r.BytesAfter))
	if len(r.Leaks) == 0 {
		fmt.Fprintln(bw, "no leaks")
	}
	for _, l := range r.Leaks {
		fmt.Fprintf(bw, "\n%s %s: +%d (%d per iteration)", l.Kind, l.Name, l.CountDelta, l.PerIteration)
		if l.BytesDelta != 0 {
			fmt.Fprintf(bw, ", %s", report.ByteSize(l.BytesDelta))
		}
		if l.RetainedBytes != 0 {
			fmt.Fprintf(bw, ", retaining %s (%s per iteration)", report.ByteSize(l.RetainedBytes), report.ByteSize(l.RetainedPerIteration))
		}
		fmt.Fprintln(bw)
		if l.CreatedFrom != nil {
			f := l.CreatedFrom
			fmt.Fprintf(bw, "  created in %s (%s:%d:%d)\n", cmpName(f.FunctionName), f.URL, f.Line, f.Column)
		}
		if len(l.RetainerPath) > 0 {
			fmt.Fprintf(bw, "  held by %s\n", strings.Join(l.RetainerPath, " → "))
		}
	}
	return bw.Flush()
}

func cmpName(fn string) string {
	if fn == "" {
		return "(anonymous)"
	}
	return fn
}
