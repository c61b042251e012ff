package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/wdext/wdext/engine/kind"
)

// serve runs wdext serve: a wdext server on --port until SIGINT or
// SIGTERM, in front of the driver the flags choose among kinds.
func serve(args []string, kinds kind.List) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	var f serverFlags
	f.register(fs, kinds)
	port := fs.Int("port", 4444, "port to listen on (0: any free port)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wdext serve [flags]   (WebDriver on http://127.0.0.1:4444 in front of the --engine's driver, or --upstream)")
		fs.PrintDefaults()
	}
	fs.Parse(args)
	if fs.NArg() != 0 {
		fmt.Fprintf(fs.Output(), "wdext serve takes no arguments, got %q\n", fs.Args())
		fs.Usage()
		os.Exit(2)
	}

	st, err := f.build()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Start the driver before listening: a driver that cannot start is an
	// error now, not in every new session later, and the first session
	// doesn't pay for the start.
	if err := st.start(ctx); err != nil {
		st.upstream.Close()
		if ctx.Err() != nil {
			return nil // interrupted while starting
		}
		return err
	}
	l, err := net.Listen("tcp", net.JoinHostPort(f.host, fmt.Sprint(*port)))
	if err != nil {
		st.upstream.Close()
		return err
	}
	st.log.Info("wdext serving", "url", "http://"+l.Addr().String(), "upstream", describe(st.upstream))
	return st.run(ctx, l, f.sessionTimeout)
}
