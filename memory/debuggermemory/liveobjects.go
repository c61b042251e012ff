package debuggermemory

import (
	"context"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/internal/turn"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/wire"
)

// liveObjects is a session's live object tracking between start and stop.
type liveObjects struct {
	turn     turn.Turn
	tracking engine.LiveObjectTracking // nil when not started
}

func liveStartCommand(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	st, err := stateNoParams(sess, body)
	if err != nil {
		return nil, err
	}
	l := &st.live
	return turn.With(ctx, l.turn, func() (any, error) {
		if l.tracking != nil {
			return nil, wire.Errorf(wire.UnsupportedOperation, "live object tracking has already started; stop it first")
		}
		t, err := engine.Need(sess, engine.LiveObjects)
		if err != nil {
			return nil, err
		}
		l.tracking, err = t.StartLiveObjects(ctx)
		return nil, err
	})
}

func liveStopCommand(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	st, err := stateNoParams(sess, body)
	if err != nil {
		return nil, err
	}
	l := &st.live
	return turn.With(ctx, l.turn, func() (any, error) {
		t := l.tracking
		if t == nil {
			return nil, wire.Errorf(wire.UnsupportedOperation, "live object tracking has not started")
		}
		l.tracking = nil
		return t.Stop(ctx)
	})
}
