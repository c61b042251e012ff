package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/internal/procgroup"
	"github.com/wdext/wdext/memory"
	"github.com/wdext/wdext/memory/debuggermemory"
	"github.com/wdext/wdext/memory/leakcheck"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
)

// stack is a wdext server with its upstream, ready to serve.
type stack struct {
	server   *webdriver.Server
	upstream driver.Upstream
	// start starts a driver the sessions share (kind.Managed.Start).
	start func(ctx context.Context) error
	// runInfo are the kind's keys for a WPT report's run_info.
	runInfo map[string]any
	log     *slog.Logger
}

// build makes the server the flags describe: its upstream, not started
// yet, and every command wdext adds.
func (f *serverFlags) build() (*stack, error) {
	log, err := f.logger()
	if err != nil {
		return nil, err
	}
	// A wdext killed outright (the OOM killer, a CI timeout) leaves its
	// browsers running: the next one ends them.
	if procs, dirs := procgroup.Sweep(); procs+dirs > 0 {
		log.Info("ended what a killed wdext left", "processes", procs, "directories", dirs)
	}
	log.Info("driver processes contained by", "mechanism", procgroup.Containment())
	m, commands, err := f.launch(log)
	if err != nil {
		return nil, err
	}
	srv := webdriver.NewServer(webdriver.Config{
		Upstream: m.Upstream,
		Sessions: session.NewRegistry(),
		Defaults: m.Defaults,
		Guard: webdriver.Guard{
			AllowedHosts:   splitList(f.allowedHosts),
			AllowedOrigins: splitList(f.allowedOrigins),
			MaxBody:        f.maxBody,
		},
		Log:         log,
		MaxSessions: f.maxSessions,
	})
	for _, c := range commands {
		srv.Handle(c.Method, c.Path, c.Run)
	}
	forcesample.Register(srv)
	memory.Register(srv)
	debuggermemory.Register(srv)
	leakcheck.Register(srv)
	start := m.Start
	if start == nil {
		start = func(context.Context) error { return nil }
	}
	return &stack{server: srv, upstream: m.Upstream, start: start, runInfo: m.RunInfo, log: log}, nil
}

// run serves on l until ctx ends, then deletes every session, stops the
// driver and returns.
func (st *stack) run(ctx context.Context, l net.Listener, sessionTimeout time.Duration) error {
	hs := &http.Server{
		Handler:           st.server,
		ReadHeaderTimeout: 10 * time.Second,
		// No ReadTimeout: it would bound the upload of a large body as a
		// whole. The Guard bounds a body's inactivity instead.
		IdleTimeout: 2 * time.Minute,
		// WebDriver requests carry a few short headers; net/http's default
		// (1 MiB) is room a hostile client could multiply by connections.
		MaxHeaderBytes: 64 << 10,
	}
	bg, stopBG := context.WithCancel(ctx)
	defer stopBG()
	if sessionTimeout > 0 {
		go st.server.ExpireIdle(bg, sessionTimeout) // owned by run: stopped by stopBG
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(webdriver.ErrorListener(l)) }() // owned by run: ends at hs.Shutdown
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	st.log.Info("shutting down", "sessions", st.server.Sessions().Len())
	stopBG()
	done, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st.server.Shutdown(done)
	hs.Shutdown(done)
	st.upstream.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func describe(up driver.Upstream) string {
	if s, ok := up.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", up)
}
