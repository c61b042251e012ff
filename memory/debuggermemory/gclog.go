package debuggermemory

import (
	"context"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/wire"
)

// gcLogCommand is POST gc-log {"collect"}: the engine's GC log on or off.
func gcLogCommand(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	var args wire.GCLogArgs
	if err := decodeStrict(body, &args, "collect"); err != nil {
		return nil, err
	}
	if args.Collect == nil {
		return nil, wire.Errorf(wire.InvalidArgument, `"collect" (a boolean) is required`)
	}
	g, err := engine.Need(sess, engine.GCLog)
	if err != nil {
		return nil, err
	}
	on, err := g.CollectGCs(ctx, *args.Collect)
	if err != nil {
		return nil, err
	}
	return wire.GCLogState{Collecting: on}, nil
}

// gcEntriesCommand is GET gc-log: the collections logged since the last
// call.
func gcEntriesCommand(ctx context.Context, sess *session.Session, _ []byte) (any, error) {
	g, err := engine.Need(sess, engine.GCLog)
	if err != nil {
		return nil, err
	}
	return g.GCs(ctx)
}
