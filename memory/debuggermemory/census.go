package debuggermemory

import (
	"context"
	"encoding/json"
	"errors"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/wdext/wdext/cdp"
	"github.com/wdext/wdext/memory/census"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
)

// parseBreakdown parses a breakdown, turning census errors into invalid
// argument naming the bad part.
func parseBreakdown(raw json.RawMessage) (census.Breakdown, error) {
	b, err := census.Parse(raw)
	var ce *census.Error
	if errors.As(err, &ce) {
		return nil, webdriver.Errorf(webdriver.InvalidArgument, "invalid breakdown at %s: %s", ce.Path, ce.Reason)
	}
	if err != nil {
		return nil, webdriver.Errorf(webdriver.InvalidArgument, "invalid breakdown: %v", err)
	}
	return b, nil
}

func censusCommand(ctx context.Context, sess *session.Session, body []byte) (any, error) {
	var args CensusArgs
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
		return nil, webdriver.Errorf(webdriver.InvalidArgument, `"targets" must be "page" or "all", not %q`, args.Targets)
	}
	if sess.Inspector != nil {
		return webkitCensus(ctx, sess, b, args.Targets)
	}
	st, err := stateOf(sess)
	if err != nil {
		return nil, err
	}
	br, err := browser(ctx, sess)
	if err != nil {
		return nil, err
	}
	page, below, err := currentPage(ctx, sess, br)
	if err != nil {
		return nil, cdpError("finding the current page", err)
	}
	if args.Targets != "all" {
		return st.census(ctx, br, page.TargetID, b)
	}

	// The page, then its out-of-process frames and its workers, one census
	// per isolate: targets in one process share the isolate, hence the heap.
	out := AllCensus{Targets: []TargetCensus{}}
	seen := map[string]bool{}
	for _, t := range append([]*target.Info{page}, below...) {
		tc := TargetCensus{Type: t.Type, URL: t.URL, TargetID: string(t.TargetID)}
		c, dup, err := st.isolateCensus(ctx, br, t.TargetID, b, seen)
		switch {
		case err != nil && (t == page || ctx.Err() != nil):
			return nil, err
		case err != nil:
			tc.Error = webdriver.AsError(err).Message
		case dup:
			continue
		}
		tc.Census = c
		out.Targets = append(out.Targets, tc)
	}
	return out, nil
}

// isolateCensus is census for one of several targets, unless the
// target's isolate is in seen (dup), which it adds it to.
func (st *state) isolateCensus(ctx context.Context, b *cdp.Browser, id target.ID, bd census.Breakdown, seen map[string]bool) (c any, dup bool, err error) {
	ts, err := st.attach(ctx, b, id)
	if err != nil {
		return nil, false, cdpError("attaching to the target", err)
	}
	iso, err := cdproto.Call(ctx, ts.s, runtime.GetIsolateID, cdproto.Empty{})
	if err != nil {
		st.forget(ts)
		return nil, false, cdpError("identifying the target's isolate", err)
	}
	if seen[iso.ID] {
		return nil, true, nil
	}
	seen[iso.ID] = true
	c, err = st.census(ctx, b, id, bd)
	return c, false, err
}

// census takes a snapshot of the target's isolate and counts it.
func (st *state) census(ctx context.Context, b *cdp.Browser, id target.ID, bd census.Breakdown) (any, error) {
	ts, err := st.attach(ctx, b, id)
	if err != nil {
		return nil, cdpError("attaching to the target", err)
	}
	snap, err := takeSnapshot(ctx, ts)
	if err != nil {
		st.forget(ts)
		return nil, cdpError("taking a heap snapshot", err)
	}
	return census.Take(census.V8(snap), bd)
}
