package leakcheck

import (
	"context"
	"io"
	"math"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/internal/turn"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

// Register adds the leak check's commands to srv.
func Register(srv *webdriver.Server) {
	srv.Handle("POST", wire.LeaksStartPath, startCommand)
	srv.Handle("POST", wire.LeaksStopPath, stopCommand)
	srv.Handle("POST", wire.LeaksIterationPath, iterationCommand)
}

// state is a session's leak check, kept as a session resource so that
// it goes away with the session.
type state struct {
	turn     turn.Turn
	tracking *check // nil when not started
}

// check is a check under way: an engine.LeakTracking or AllLeakTracking.
type check struct {
	stop func(ctx context.Context, iterations int) (any, error)
	// mark marks an iteration's end where the engine can
	// (engine.IterationMarker), else nil.
	mark  func(ctx context.Context) error
	marks int
}

func (*state) Close() error { return nil }

type stateKey struct{}

func stateOf(sess *session.Session) (*state, error) {
	r, err := sess.Resource(stateKey{}, func() (io.Closer, error) {
		return &state{turn: turn.New()}, nil
	})
	if err != nil {
		return nil, wire.Errorf(wire.InvalidSessionID, "%v", err)
	}
	return r.(*state), nil
}

func startCommand(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	var args wire.LeakStartArgs
	if err := webdriver.DecodeParams(body, &args, "targets"); err != nil {
		return nil, err
	}
	switch args.Targets {
	case "", "page", "all":
	default:
		return nil, wire.Errorf(wire.InvalidArgument, `"targets" must be "page" or "all", not %q`, args.Targets)
	}
	st, err := stateOf(sess)
	if err != nil {
		return nil, err
	}
	return turn.With(ctx, st.turn, func() (any, error) {
		begin, err := starter(sess, args.Targets == "all")
		if err != nil {
			return nil, err // an engine without it keeps a check under way
		}
		// A new start replaces a check under way: its baseline is dropped.
		st.tracking = nil
		st.tracking, err = begin(ctx)
		return nil, err
	})
}

// starter finds the engine's leak check, of the page's isolate or of all
// the page's, and returns what starts it.
func starter(sess *session.Session, all bool) (func(context.Context) (*check, error), error) {
	if all {
		t, err := engine.Need(sess, engine.AllLeaks)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (*check, error) { return checkOf[wire.AllLeaks](t.StartAllLeaks(ctx)) }, nil
	}
	t, err := engine.Need(sess, engine.Leaks)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (*check, error) { return checkOf[wire.LeakReport](t.StartLeaks(ctx)) }, nil
}

// checkOf is the check that started, t.
func checkOf[R any, T interface {
	Stop(context.Context, int) (R, error)
}](t T, err error) (*check, error) {
	if err != nil {
		return nil, err
	}
	c := &check{stop: func(ctx context.Context, n int) (any, error) { return t.Stop(ctx, n) }}
	if m, ok := any(t).(engine.IterationMarker); ok {
		c.mark = m.MarkIteration
	}
	return c, nil
}

func stopCommand(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	var args struct {
		Iterations *float64 `json:"iterations"`
	}
	if err := webdriver.DecodeParams(body, &args, "iterations"); err != nil {
		return nil, err
	}
	n, err := iterations(args.Iterations)
	if err != nil {
		return nil, err
	}
	return underWay(ctx, sess, "leaks/stop before leaks/start: POST …/wdext/memory/leaks/start first, then run the scenario, then …/leaks/stop",
		func(st *state, c *check) (any, error) {
			if c.marks != 0 && c.marks != n-1 && c.marks != n {
				return nil, wire.Errorf(wire.InvalidArgument,
					"leaks/stop says %d iterations, but leaks/iteration marked %d: mark the end of each iteration but the last (or of each), or of none; the check goes on", n, c.marks)
			}
			st.tracking = nil
			return c.stop(ctx, n)
		})
}

// iterationCommand marks the end of an iteration of the check under way.
func iterationCommand(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	if err := webdriver.DecodeParams(body, &struct{}{}); err != nil {
		return nil, err
	}
	return underWay(ctx, sess, "leaks/iteration before leaks/start: POST …/wdext/memory/leaks/start first, then mark the end of each iteration",
		func(_ *state, c *check) (any, error) {
			c.marks++
			if c.mark == nil {
				return nil, nil // judged without the marks
			}
			return nil, c.mark(ctx)
		})
}

// underWay runs fn in the session's turn with the check under way, or
// answers "invalid argument" with none, saying so.
func underWay(ctx context.Context, sess *session.Session, none string, fn func(*state, *check) (any, error)) (any, error) {
	st, err := stateOf(sess)
	if err != nil {
		return nil, err
	}
	return turn.With(ctx, st.turn, func() (any, error) {
		if st.tracking == nil {
			return nil, wire.Errorf(wire.InvalidArgument, "%s", none)
		}
		return fn(st, st.tracking)
	})
}

// iterations checks the "iterations" parameter: a whole number ≥ 1.
func iterations(v *float64) (int, error) {
	if v == nil {
		return 0, wire.Errorf(wire.InvalidArgument, `"iterations" is missing: say how many times the scenario ran between leaks/start and leaks/stop`)
	}
	f := *v
	if f != math.Trunc(f) || f < 1 || f > math.MaxInt32 {
		return 0, wire.Errorf(wire.InvalidArgument, `"iterations" must be a whole number of at least 1, not %v`, f)
	}
	return int(f), nil
}
