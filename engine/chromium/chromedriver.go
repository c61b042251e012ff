package chromium

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/internal/procgroup"
)

// Driver starts and supervises chromedriver processes.
type Driver struct {
	// Path is the chromedriver binary.
	Path string
	// Args are extra arguments (e.g. --verbose).
	Args []string
	// StartTimeout bounds how long a start may take to become ready.
	StartTimeout time.Duration
	// Stderr receives the driver's output; nil discards it (the last
	// of it is kept for the error of a failed start either way).
	Stderr io.Writer
	// Bind makes the engine of each session.
	Bind engine.Binder

	// startMu serialises starts (a start can take seconds); mu guards the
	// fields below and is never held across a start, so Ready and Kill
	// answer at once while a driver is starting.
	startMu  sync.Mutex
	mu       sync.Mutex
	current  *process
	starting bool
	startErr error // of the last start, until a start succeeds
	closed   bool
}

type process struct {
	driver.Instance
	group *procgroup.Group
}

// FindDriver returns explicit if set, else chromedriver from $PATH,
// else /usr/bin/chromedriver.
func FindDriver(explicit string) (string, error) {
	return driver.Find(explicit, "chromedriver", "pass --chromedriver, put it on $PATH, or install chromium-driver")
}

// Managed is true: wdext owns the process and its browsers.
func (c *Driver) Managed() bool { return true }

func (c *Driver) String() string { return "managed " + c.Path }

// Current returns the running chromedriver, starting a new one when there
// is none or the last one died.
func (c *Driver) Current(ctx context.Context) (*driver.Instance, error) {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errors.New("driver is shutting down")
	}
	if c.current != nil && c.current.Alive() {
		c.mu.Unlock()
		return &c.current.Instance, nil
	}
	c.starting = true
	c.mu.Unlock()

	p, err := c.start(ctx)
	var early *exitedEarly
	for try := 1; try < startTries && errors.As(err, &early); try++ {
		// Most often a lost race for the free port (another process took
		// it between FreePort and the driver's bind): a new port.
		p, err = c.start(ctx)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	c.starting, c.startErr = false, err
	if err != nil {
		return nil, err
	}
	c.current = p
	return &p.Instance, nil
}

// Ready reports whether a new session can be sent to the driver without
// waiting (what /status "ready" means). It never waits for a start:
//
//   - closed: false;
//   - a start is under way: false;
//   - the last start failed (and none has succeeded since): false;
//   - a driver is running: whether its own /status says ready;
//   - no driver is running — none was started yet, or the last one exited:
//     true. The driver is started lazily by the next new session (wdext
//     serve starts one eagerly at startup anyway); answering false here
//     would keep a client that polls /status before its first session
//     waiting forever.
func (c *Driver) Ready(ctx context.Context) bool {
	c.mu.Lock()
	p, starting, startErr, closed := c.current, c.starting, c.startErr, c.closed
	c.mu.Unlock()
	switch {
	case closed, starting, startErr != nil:
		return false
	case p == nil || !p.Alive():
		return true
	}
	return driver.StatusReady(ctx, p.URL) == nil
}

func (c *Driver) start(ctx context.Context) (*process, error) {
	port, err := driver.FreePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{fmt.Sprintf("--port=%d", port), "--allowed-ips=127.0.0.1"}, c.Args...)
	cmd := exec.Command(c.Path, args...)
	out := &outputTail{}
	cmd.Stdout = out
	if c.Stderr != nil {
		cmd.Stdout = io.MultiWriter(out, c.Stderr)
	}
	cmd.Stderr = cmd.Stdout
	// The browsers inherit the output pipe: Wait must not wait for them.
	cmd.WaitDelay = 200 * time.Millisecond
	// A group of its own: chromedriver and every Chromium it launches end
	// together, whether wdext stops it, it dies, or wdext dies.
	g, err := procgroup.Start(cmd)
	if err != nil {
		return nil, err
	}
	// Sessions end with the driver's exit, not once its browsers are
	// reaped too.
	done := g.Exited()
	p := &process{group: g}
	p.URL = &url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", port)}
	p.Done = done
	p.Bind = c.Bind

	timeout := c.StartTimeout
	if timeout == 0 {
		timeout = 20 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := driver.StatusReady(ctx, p.URL)
		if err == nil {
			return p, nil
		}
		select {
		case <-done:
			<-p.group.Done() // all of its output is in
			return nil, &exitedEarly{path: c.Path, output: out.String()}
		case <-ctx.Done():
			p.kill()
			return nil, fmt.Errorf("%s not ready after %v: %v", c.Path, timeout, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// startTries is how many times a driver that exits before it is ready is
// started.
const startTries = 3

// exitedEarly is the failure of a driver that exited before it was ready,
// with the end of what it printed (why, usually).
type exitedEarly struct{ path, output string }

func (e *exitedEarly) Error() string {
	if e.output == "" {
		return e.path + " exited before it was ready (it printed nothing)"
	}
	return e.path + " exited before it was ready; it printed:\n" + e.output
}

// outputTail keeps the last 8 KiB written to it.
type outputTail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *outputTail) Write(p []byte) (int, error) {
	const max = 8 << 10
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > max {
		t.buf = t.buf[len(t.buf)-max:]
	}
	return len(p), nil
}

func (t *outputTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// kill ends the driver's whole process group and waits until all of it
// is gone.
func (p *process) kill() { p.group.Kill() }

// Kill stops the current driver (for tests of driver death).
func (c *Driver) Kill() {
	c.mu.Lock()
	p := c.current
	c.mu.Unlock()
	if p != nil {
		p.kill()
	}
}

// Close stops the driver and its browsers; later Current calls fail. A
// start under way is waited for, so that its process is stopped too.
func (c *Driver) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.startMu.Lock()
	defer c.startMu.Unlock()
	c.mu.Lock()
	p := c.current
	c.current = nil
	c.mu.Unlock()
	if p != nil {
		p.kill()
	}
	return nil
}
