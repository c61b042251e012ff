package debuggermemory

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/memory/census"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/wire"
)

// parseBreakdown parses a breakdown, turning census errors into invalid
// argument naming the bad part.
func parseBreakdown(raw json.RawMessage) (census.Breakdown, error) {
	b, err := census.Parse(raw)
	var ce *census.Error
	if errors.As(err, &ce) {
		return nil, wire.Errorf(wire.InvalidArgument, "invalid breakdown at %s: %s", ce.Path, ce.Reason)
	}
	if err != nil {
		return nil, wire.Errorf(wire.InvalidArgument, "invalid breakdown: %v", err)
	}
	return b, nil
}

// censusCommand counts the heaps the session's engine lists: the current
// page's, or (targets "all") one census per isolate of the page, its
// out-of-process frames and its workers.
func censusCommand(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	var args wire.CensusArgs
	if err := decodeStrict(body, &args, "breakdown", "targets"); err != nil {
		return nil, err
	}
	b, err := parseBreakdown(args.Breakdown)
	if err != nil {
		return nil, err
	}
	switch args.Targets {
	case "", "page", "all":
	default:
		return nil, wire.Errorf(wire.InvalidArgument, `"targets" must be "page" or "all", not %q`, args.Targets)
	}
	src, err := engine.Need(sess, engine.Census)
	if err != nil {
		return nil, err
	}
	all := args.Targets == "all"
	heaps, err := src.Heaps(ctx, all)
	if err != nil {
		return nil, err
	}
	if !all {
		return take(ctx, heaps[0], b, args.Breakdown)
	}
	out := wire.AllCensus{Targets: []wire.TargetCensus{}}
	for i, h := range heaps {
		tc := wire.TargetCensus{Type: h.Type, URL: h.URL, TargetID: h.ID}
		c, err := take(ctx, h, b, args.Breakdown)
		switch {
		case err != nil && (i == 0 || ctx.Err() != nil || wire.AsError(err).Code == wire.InvalidSessionID):
			// The page's failure, the command's end, or the session's.
			return nil, err
		case err != nil:
			tc.Error = wire.AsError(err).Message // it went away, crashed, or does not answer
		}
		tc.Census = c
		out.Targets = append(out.Targets, tc)
	}
	return out, nil
}

// take counts one heap: by the engine's own census if it has one (with
// the breakdown as the client gave it, raw), else from its snapshot.
func take(ctx context.Context, h engine.Heap, b census.Breakdown, raw json.RawMessage) (any, error) {
	if h.Err != nil {
		return nil, h.Err
	}
	if h.Census != nil {
		return h.Census(ctx, raw)
	}
	snap, err := h.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return census.Take(snap, b)
}
