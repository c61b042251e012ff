package memory

import (
	"context"
	"math"
	"time"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

// DefaultTimeout bounds a command whose parameters give no "timeout".
const DefaultTimeout = 10 * time.Second

// maxTimeout is the largest "timeout" accepted: the WebDriver spec's
// largest timeout value (2^53 − 1 ms), like the session timeouts.
const maxTimeout = 1<<53 - 1

// Register adds the memory commands to srv.
func Register(srv *webdriver.Server) {
	srv.Handle("POST", wire.MeasurePath, MeasureCommand)
	srv.Handle("POST", wire.GCPath, GCCommand)
}

// MeasureArgs are the measure command's parameters.
type MeasureArgs struct {
	// Source is SourceAPI, SourceEngine or "" for the default: the API
	// where the current top-level browsing context is cross-origin
	// isolated, else the engine.
	Source string
	// Timeout bounds the command; 0 means DefaultTimeout was asked for.
	Timeout time.Duration
}

// GCArgs are the gc command's parameters.
type GCArgs struct {
	Timeout time.Duration
}

// rawArgs is what the measure command accepts (webdriver.DecodeParams
// rejects other members); gc takes the timeout alone.
type rawArgs struct {
	Source  *string  `json:"source"`
	Timeout *float64 `json:"timeout"`
}

// ParseMeasureArgs decodes and checks the measure command's parameters;
// every problem is "invalid argument".
func ParseMeasureArgs(body []byte) (MeasureArgs, error) {
	var raw rawArgs
	if err := webdriver.DecodeParams(body, &raw, "source", "timeout"); err != nil {
		return MeasureArgs{}, err
	}
	var a MeasureArgs
	if raw.Source != nil {
		switch *raw.Source {
		case wire.SourceAPI, wire.SourceEngine:
			a.Source = *raw.Source
		default:
			return MeasureArgs{}, wire.Errorf(wire.InvalidArgument, "parameter \"source\": %q is not %q or %q", *raw.Source, wire.SourceAPI, wire.SourceEngine)
		}
	}
	t, err := parseTimeout(raw.Timeout)
	a.Timeout = t
	return a, err
}

// ParseGCArgs decodes and checks the gc command's parameters.
func ParseGCArgs(body []byte) (GCArgs, error) {
	var raw struct {
		Timeout *float64 `json:"timeout"`
	}
	if err := webdriver.DecodeParams(body, &raw, "timeout"); err != nil {
		return GCArgs{}, err
	}
	t, err := parseTimeout(raw.Timeout)
	return GCArgs{Timeout: t}, err
}

// parseTimeout checks a "timeout" in milliseconds the way WebDriver checks
// its session timeouts: an integer from 0 to 2^53 − 1. Absent or null is
// DefaultTimeout.
func parseTimeout(ms *float64) (time.Duration, error) {
	if ms == nil {
		return DefaultTimeout, nil
	}
	v := *ms
	if v < 0 || v != math.Trunc(v) || v > maxTimeout {
		return 0, wire.Errorf(wire.InvalidArgument, "parameter \"timeout\": %v is not an integer number of milliseconds from 0 to 2^53-1", v)
	}
	// Durations above ~292 years overflow, and deadlines near that limit
	// too: nobody waits more than a century.
	if d := 100 * 365 * 24 * time.Hour; v > float64(d.Milliseconds()) {
		return d, nil
	}
	return time.Duration(v) * time.Millisecond, nil
}

// MeasureCommand is POST /session/{id}/wdext/memory/measure: a
// MemoryMeasurement of the session's current top-level browsing context,
// from the session's engine.
func MeasureCommand(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	args, err := ParseMeasureArgs(body)
	if err != nil {
		return nil, err
	}
	m, err := engine.Need(sess, engine.MeasureMemory)
	if err != nil {
		return nil, err
	}
	return webdriver.Within(ctx, args.Timeout, "memory/measure", func(ctx context.Context) (any, error) {
		return m.MeasureMemory(ctx, args.Source)
	})
}

// GCCommand is POST /session/{id}/wdext/memory/gc: a full garbage
// collection in every heap of the current top-level browsing context
// (its process, out-of-process iframes and dedicated workers).
func GCCommand(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	args, err := ParseGCArgs(body)
	if err != nil {
		return nil, err
	}
	g, err := engine.Need(sess, engine.GC)
	if err != nil {
		return nil, err
	}
	return webdriver.Within(ctx, args.Timeout, "memory/gc", func(ctx context.Context) (any, error) {
		return g.CollectGarbage(ctx)
	})
}
