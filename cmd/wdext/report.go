package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
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
standard input. wdext wpt --html FILE makes the report of a test run.

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
	forced := fs.String("forced", "", "trace: when forced samples were taken, in the traces' milliseconds (see above)")
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
	if *forced != "" && kind != "trace" {
		return usageErr("--forced is for traces")
	}
	var p report.Page
	p.Title = *title
	switch kind {
	case "trace":
		if len(files) == 0 {
			return usageErr("no trace file")
		}
		extra, err := report.ParseWindows(*forced)
		if err != nil {
			return err
		}
		var in []report.TraceInput
		for _, f := range files {
			data, err := readInput(f)
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
		defaultTitle(&p, "JS Self-Profiling trace", files)
	case "census":
		if len(files) == 0 {
			return usageErr("no census file")
		}
		for _, f := range files {
			cs, err := readCensus(f)
			if err != nil {
				return err
			}
			p.AddCensus(f, cs...)
		}
		defaultTitle(&p, "Census", files)
	case "census-diff":
		if len(files) != 2 {
			return usageErr("want BEFORE.json AFTER.json")
		}
		var roots [2]*report.CensusNode
		for i, f := range files {
			cs, err := readCensus(f)
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
	case "leaks":
		if len(files) != 1 {
			return usageErr("want one LEAKS.json")
		}
		data, err := readInput(files[0])
		if err != nil {
			return err
		}
		rs, err := report.ParseLeaks(data)
		if err != nil {
			return fmt.Errorf("%s: %w", files[0], err)
		}
		p.AddLeaks(files[0], rs...)
		defaultTitle(&p, "Leak check", files)
	default:
		return usageErr(fmt.Sprintf("unknown kind %q (trace, census, census-diff or leaks)", kind))
	}
	return writeReport(*out, &p)
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

func readInput(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(name)
}

func readCensus(name string) ([]report.NamedCensus, error) {
	data, err := readInput(name)
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
