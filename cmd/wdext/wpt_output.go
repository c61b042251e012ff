package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/wdext/wdext/report"
	"github.com/wdext/wdext/wpt"
)

// writeHTML writes the run's HTML report (package report) to name, if
// given.
func writeHTML(name, root string, run wpt.Run, exp wpt.Expectations) error {
	if name == "" {
		return nil
	}
	p := report.Page{Title: "wdext wpt: " + root}
	if !run.Start.IsZero() {
		p.Subtitle = "run of " + run.Start.Format("2006-01-02 15:04:05 MST")
	}
	p.AddWPT(run, exp)
	return writeReport(name, &p)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func writeFile(name string, fn func(io.Writer) error) error {
	if name == "" {
		return nil
	}
	out, err := os.Create(name)
	if err != nil {
		return err
	}
	return errors.Join(fn(out), out.Close())
}
