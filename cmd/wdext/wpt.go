package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/tebeka/selenium"

	"github.com/wdext/wdext/wpt"
)

// wptCmd runs WPT-style testharness.js tests through a wdext it starts
// in-process (in front of its own chromedriver, or --upstream).
func wptCmd(args []string) (exit int, err error) {
	fs := flag.NewFlagSet("wpt", flag.ExitOnError)
	var f serverFlags
	f.register(fs)
	root := fs.String("wpt-root", "", "a WPT checkout; PATHS are relative to it (default: the one PATH is the root)")
	report := fs.String("report", "", "write results in wptreport JSON to this file")
	junit := fs.String("junit", "", "write results as JUnit XML to this file")
	expected := fs.String("expected", "", "expectations: a JSON file, a WPT metadata .ini file or directory")
	multiplier := fs.Float64("timeout-multiplier", 1, "multiply every test's timeout (10 s, or 60 s for long tests)")
	harness := fs.String("testharness", "", "testharness.js to serve (default: the tree's own, else the npm package wpt-runner's)")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: wdext wpt [flags] PATHS...   (e.g. wdext wpt testdata/wpt, or wdext wpt --wpt-root ~/wpt js-self-profiling/)")
		fs.PrintDefaults()
	}
	fs.Parse(args)
	dir, paths := *root, fs.Args()
	if dir == "" {
		if len(paths) != 1 {
			fs.Usage()
			return 2, nil
		}
		dir, paths = paths[0], nil
	}
	exp := wpt.Expectations(nil)
	if *expected != "" {
		if exp, err = wpt.LoadExpectations(*expected); err != nil {
			return 1, err
		}
	}
	tests, err := wpt.Discover(dir, paths)
	if err != nil {
		return 1, err
	}
	th, err := wpt.FindTestharness(*harness, dir)
	if err != nil {
		return 1, err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := f.build()
	if err != nil {
		return 1, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 1, err
	}
	serveCtx, stopServe := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- st.run(serveCtx, l, f.sessionTimeout) }() // owned here: stopped below
	defer func() {
		stopServe()
		<-served
	}()

	srv, err := wpt.NewServer(dir, wpt.Options{MainHost: "localhost"})
	if err != nil {
		return 1, err
	}
	if err := srv.Start(ctx); err != nil {
		return 1, err
	}
	defer srv.Close()
	progress := wpt.NewProgress(os.Stdout, len(tests), exp)
	caps, product := wpt.ChromeCapabilities(), "chrome"
	if f.engine == "webkitgtk" && f.upstream == "" {
		caps, product = selenium.Capabilities{}, "webkitgtk"
	}
	runner := &wpt.Runner{
		WebDriver:         "http://" + l.Addr().String(),
		Server:            srv,
		Testharness:       th,
		Capabilities:      caps,
		TimeoutMultiplier: *multiplier,
		Done:              progress.Done,
		Log:               st.log,
	}
	runner.Mount()
	run := wpt.Run{Start: time.Now(), Info: map[string]any{"product": product, "wdext": true}}
	run.Results, err = runner.Run(ctx, tests)
	run.End = time.Now()
	if err != nil {
		return 1, err
	}
	if err := wpt.WriteSummary(os.Stdout, run, exp); err != nil {
		return 1, err
	}
	write := func(name string, fn func(*os.File) error) error {
		if name == "" {
			return nil
		}
		out, err := os.Create(name)
		if err != nil {
			return err
		}
		return errors.Join(fn(out), out.Close())
	}
	if err := errors.Join(
		write(*report, func(o *os.File) error { return wpt.WriteWPTReport(o, run, exp) }),
		write(*junit, func(o *os.File) error { return wpt.WriteJUnit(o, run, exp) }),
	); err != nil {
		return 1, err
	}
	return wpt.ExitCode(run.Results, exp), nil
}
