package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wdext/wdext/report"
)

const reportUsage = `usage: wdext report KIND [flags] FILE...
Draws wdext's results as one self-contained HTML file (no network; open it
from file://). KIND is:

  trace [--forced LIST] TRACE.json...   flame charts of JS Self-Profiling traces
                                        (what profiler.stop() resolved with, as
                                        JSON), one under the other
  census CENSUS.json...                 treemaps of censuses (wdext census, or the
                                        census command's answer)
  census-diff BEFORE.json AFTER.json    what grew between two censuses
  leaks LEAKS.json                      a leak verdict (wdext leaks --json, or
                                        leaks/stop's answer)

A file may hold the bare result or a WebDriver answer {"value": ...}; "-" is
standard input. Input is checked as it is read: what is not JSON is refused
at its first bad byte, and a file larger than --max-input (64 MiB) when it
passes it. wdext wpt --html FILE makes the report of a test run.

--forced: a trace does not say which samples were forced. List the
performance.now() times of your forcesample calls, as START-END spans
(before-after the call) or timestamps, comma-separated: "120.5-131,240-251".
A trace file {"trace": ..., "forced": [t, [start, end], ...]} carries its own.

flags:
`

// reportCmd writes an HTML report of saved results.
func reportCmd(args []string) error {
	fs := flag.NewFlagSet("report", flag.ExitOnError)
	out := fs.String("o", "", "write the report to this file (default: standard output)")
	title := fs.String("title", "", "the report's title (default: from the kind and files)")
	var o reportOpts
	fs.StringVar(&o.forced, "forced", "", "trace: when forced samples were taken, in the traces' milliseconds (see above)")
	fs.Int64Var(&o.maxInput, "max-input", report.MaxInput, "the largest input file in bytes: larger input, or input that is not JSON, is refused as it streams in")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), reportUsage)
		fs.PrintDefaults()
	}
	rest := parseInterleaved(fs, args) // -h: the usage, exit 0
	if len(rest) == 0 {
		fmt.Fprintln(fs.Output(), "wdext report: no KIND: trace, census, census-diff or leaks")
		fmt.Fprintln(fs.Output(), "run wdext report -h for more")
		os.Exit(2)
	}
	kind, files := rest[0], rest[1:]
	usageErr := func(msg string) error {
		fmt.Fprintf(fs.Output(), "wdext report %s: %s\nrun wdext report -h for more\n", kind, msg)
		os.Exit(2)
		return nil
	}
	if o.forced != "" && kind != "trace" {
		return usageErr("--forced is for traces")
	}
	k, ok := reportKinds[kind]
	if !ok {
		return usageErr(fmt.Sprintf("unknown kind %q (trace, census, census-diff or leaks)", kind))
	}
	if !k.takes(len(files)) {
		return usageErr(k.filesUsage)
	}
	var p report.Page
	p.Title = *title
	if err := k.add(&p, files, o); err != nil {
		return err
	}
	return writeReport(*out, &p)
}

// A reportKind is a KIND of wdext report: how many files it takes (what
// to say when they do not fit), and how it adds them to the page.
type reportKind struct {
	takes      func(files int) bool
	filesUsage string
	add        func(p *report.Page, files []string, o reportOpts) error
}

// reportOpts are the flags the kinds read.
type reportOpts struct {
	forced   string // --forced: the traces' forced samples
	maxInput int64  // --max-input: the largest file read
}

var reportKinds = map[string]reportKind{
	"trace":       {func(n int) bool { return n > 0 }, "no trace file", addTraces},
	"census":      {func(n int) bool { return n > 0 }, "no census file", addCensuses},
	"census-diff": {func(n int) bool { return n == 2 }, "want BEFORE.json AFTER.json", addCensusDiff},
	"leaks":       {func(n int) bool { return n == 1 }, "want one LEAKS.json", addLeaks},
}

// addTraces adds flame charts of the trace files, with the forced
// samples each file says were taken and those --forced lists.
func addTraces(p *report.Page, files []string, o reportOpts) error {
	extra, err := report.ParseWindows(o.forced)
	if err != nil {
		return err
	}
	var in []report.TraceInput
	for _, f := range files {
		data, err := readInput(f, o.maxInput)
		if err != nil {
			return err
		}
		t, ws, err := report.ParseTrace(data)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		in = append(in, report.TraceInput{Name: f, Trace: t, Forced: append(ws, extra...)})
	}
	p.AddTraces(in...)
	defaultTitle(p, "JS Self-Profiling trace", files)
	return nil
}

// addCensuses adds treemaps of the census files.
func addCensuses(p *report.Page, files []string, o reportOpts) error {
	for _, f := range files {
		cs, err := readCensus(f, o.maxInput)
		if err != nil {
			return err
		}
		p.AddCensus(f, cs...)
	}
	defaultTitle(p, "Census", files)
	return nil
}

// addCensusDiff adds what grew from the census of files[0] to that of
// files[1], each a census of one target.
func addCensusDiff(p *report.Page, files []string, o reportOpts) error {
	var roots [2]*report.CensusNode
	for i, f := range files {
		cs, err := readCensus(f, o.maxInput)
		if err != nil {
			return err
		}
		if len(cs) != 1 {
			return fmt.Errorf("%s: %d censuses (targets \"all\"): census-diff compares one with one", f, len(cs))
		}
		roots[i] = cs[0].Root
	}
	p.AddCensusDiff(files[0]+" → "+files[1], roots[0], roots[1])
	if p.Title == "" {
		p.Title = "What grew: census diff"
	}
	return nil
}

// addLeaks adds the leak verdict of files[0].
func addLeaks(p *report.Page, files []string, o reportOpts) error {
	data, err := readInput(files[0], o.maxInput)
	if err != nil {
		return err
	}
	rs, err := report.ParseLeaks(data)
	if err != nil {
		return fmt.Errorf("%s: %w", files[0], err)
	}
	p.AddLeaks(files[0], rs...)
	defaultTitle(p, "Leak check", files)
	return nil
}

func defaultTitle(p *report.Page, what string, files []string) {
	if p.Title != "" {
		return
	}
	p.Title = what
	if len(files) == 1 && files[0] != "-" {
		p.Title += ": " + filepath.Base(files[0])
	} else if len(files) > 1 {
		p.Title += fmt.Sprintf("s (%d)", len(files))
	}
}

// readInput reads the JSON value of the file name ("-": standard input),
// refusing input that is not JSON at its first bad byte and input larger
// than limit bytes (report.ReadInput): /dev/zero was read until memory
// ran out.
func readInput(name string, limit int64) ([]byte, error) {
	in := os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		in = f
	}
	data, err := report.ReadInput(in, limit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return data, nil
}

func readCensus(name string, limit int64) ([]report.NamedCensus, error) {
	data, err := readInput(name, limit)
	if err != nil {
		return nil, err
	}
	cs, err := report.ParseCensus(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return cs, nil
}

// writeReport writes p to name, or to standard output when name is "".
// A file is written whole or not at all (a temporary file renamed).
func writeReport(name string, p *report.Page) error {
	if name == "" {
		return p.Write(os.Stdout)
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), ".wdext-report-*")
	if err != nil {
		return err
	}
	if err := errors.Join(p.Write(tmp), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), name)
}
