package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// caughtSignal is the cause of a context a signal ended.
type caughtSignal struct{ sig syscall.Signal }

func (c caughtSignal) Error() string { return c.sig.String() }

// signalContext is a context that SIGINT or SIGTERM ends, with the signal
// as its cause (see exitStatus). A second signal ends wdext at once, after
// hard (which ends the driver and its browsers: they would outlive a wdext
// killed by the default action).
func signalContext(hard func()) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // owned by signalContext's stop, which waits for it
		defer wg.Done()
		select {
		case s := <-c:
			fmt.Fprintf(os.Stderr, "wdext: %v: stopping, writing the report of the tests that finished (again to quit at once)\n", s)
			cancel(caughtSignal{s.(syscall.Signal)})
		case <-done:
			return
		}
		select {
		case s := <-c:
			fmt.Fprintf(os.Stderr, "wdext: %v again: ending the browsers and quitting\n", s)
			hard()
			os.Exit(128 + int(s.(syscall.Signal)))
		case <-done:
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			signal.Stop(c)
			close(done)
			wg.Wait()
			cancel(nil)
		})
	}
	return ctx, stop
}

// exitStatus is the exit status of a run that ctx's signal interrupted:
// 128 plus the signal's number, as a shell reports a process the signal
// killed.
func exitStatus(ctx context.Context) int {
	var c caughtSignal
	if errors.As(context.Cause(ctx), &c) {
		return 128 + int(c.sig)
	}
	return 128 + int(syscall.SIGINT)
}
