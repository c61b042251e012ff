package debuggermemory

import (
	"io"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/internal/turn"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/wire"
)

// state is one WebDriver session's Debugger.Memory state, kept as a
// session resource so that it goes away with the session.
type state struct {
	alloc allocLog
	// sampler is the engine's allocation sampler, while tracking.
	sampler engine.AllocationSampler
	live    liveObjects
}

type stateKey struct{}

func (st *state) Close() error { return nil }

func stateOf(sess *session.Session) (*state, error) {
	r, err := sess.Resource(stateKey{}, func() (io.Closer, error) {
		return &state{alloc: newAllocLog(), live: liveObjects{turn: turn.New()}}, nil
	})
	if err != nil {
		return nil, wire.Errorf(wire.InvalidSessionID, "%v", err)
	}
	return r.(*state), nil
}

// stateNoParams is stateOf for a command that takes no parameters: any it
// got are "invalid argument".
func stateNoParams(sess *session.Session, body []byte) (*state, error) {
	if err := decodeStrict(body, &struct{}{}); err != nil {
		return nil, err
	}
	return stateOf(sess)
}
