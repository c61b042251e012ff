package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/wdext/wdext/wpt"
)

// setupCmd installs what `wdext wpt` needs beyond the binary: the npm
// package wpt-runner's testharness.js, in the user's cache directory, for
// the trees that have none of their own.
func setupCmd(args []string) error {
	fs := flag.NewFlagSet("setup", flag.ExitOnError)
	registry := fs.String("registry", "", "npm registry to fetch the package from (default: $npm_config_registry, else "+wpt.DefaultRegistry+")")
	fs.Usage = func() {
		where, err := wpt.CachedTestharness()
		if err != nil {
			where = "the user's cache directory"
		}
		fmt.Fprintf(fs.Output(), "usage: wdext setup [flags]\n"+
			"Installs testharness.js for wdext wpt, once per user: the npm package %s's, into\n"+
			"  %s\n"+
			"from a wdext checkout's .cache/ (scripts/deps.sh) when the working directory is\n"+
			"in one, else from the npm registry (checked against the package's hash;\n"+
			"HTTPS_PROXY is honoured). It prints the file's path.\n", wpt.HarnessPackage, where)
		fs.PrintDefaults()
	}
	fs.Parse(args)
	if fs.NArg() != 0 {
		fmt.Fprintf(fs.Output(), "wdext setup takes no arguments, got %q\n", fs.Args())
		fs.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	path, err := wpt.InstallTestharness(ctx, *registry, os.Stderr)
	if err != nil {
		return err
	}
	fmt.Println(path)
	return nil
}
