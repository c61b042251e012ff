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
}

// state is a session's leak check, kept as a session resource so that
// it goes away with the session.
type state struct {
	turn     turn.Turn
	tracking stopper // nil when not started
}

// stopper ends a check: an engine.LeakTracking or AllLeakTracking.
type stopper func(ctx context.Context, iterations int) (any, error)

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
func starter(sess *session.Session, all bool) (func(context.Context) (stopper, error), error) {
	if all {
		t, err := engine.Need(sess, engine.AllLeaks)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (stopper, error) { return stopperOf[wire.AllLeaks](t.StartAllLeaks(ctx)) }, nil
	}
	t, err := engine.Need(sess, engine.Leaks)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (stopper, error) { return stopperOf[wire.LeakReport](t.StartLeaks(ctx)) }, nil
}

// stopperOf is the stopper of a check that started, t.
func stopperOf[R any, T interface {
	Stop(context.Context, int) (R, error)
}](t T, err error) (stopper, error) {
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, n int) (any, error) { return t.Stop(ctx, n) }, nil
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
	st, err := stateOf(sess)
	if err != nil {
		return nil, err
	}
	return turn.With(ctx, st.turn, func() (any, error) {
		stop := st.tracking
		if stop == nil {
			return nil, wire.Errorf(wire.InvalidArgument,
				"leaks/stop before leaks/start: POST …/wdext/memory/leaks/start first, then run the scenario, then …/leaks/stop")
		}
		st.tracking = nil
		return stop(ctx, n)
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
