package wdclient

import (
	"context"
	"fmt"
	"strings"

	"github.com/tebeka/selenium"
	"github.com/wdext/wdext/wire"
)

// LeakError is a leak check whose verdict names groups that grew: the
// failure a test reports. Its message lists one group per line.
type LeakError struct {
	Report wire.LeakReport
}

func (e *LeakError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "wdext: %d leak group(s) over %d iterations:", len(e.Report.Leaks), e.Report.Iterations)
	for _, l := range e.Report.Leaks {
		b.WriteString("\n  ")
		b.WriteString(DescribeLeak(l))
	}
	return b.String()
}

// DescribeLeak is one group of a verdict on one line: its kind and name,
// its growth, what it retains, its retainer path and creation site.
func DescribeLeak(l wire.Leak) string {
	s := fmt.Sprintf("%s %s: +%d per iteration (%d in all), retains %d B per iteration",
		l.Kind, l.Name, l.PerIteration, l.CountDelta, l.RetainedPerIteration)
	if len(l.RetainerPath) > 0 {
		s += "; via " + strings.Join(l.RetainerPath, " → ")
	}
	if f := l.CreatedFrom; f != nil {
		name := f.FunctionName
		if name == "" {
			name = "(anonymous)"
		}
		s += fmt.Sprintf("; created in %s %s:%d:%d", name, f.URL, f.Line, f.Column)
	}
	return s
}

// CheckLeaks is the leak check in one call: it runs action warmup times
// (a first run loads code and fills caches, which is no leak), starts a
// leak check of the current page, runs action iterations times, marking
// where each ended (LeakIteration), and stops. It returns the verdict,
// and a *LeakError when the verdict names any group. When action fails,
// the check is stopped and action's error returned.
func CheckLeaks(wd selenium.WebDriver, action func() error, iterations, warmup int) (wire.LeakReport, error) {
	c, id, err := forSession(wd)
	if err != nil {
		return wire.LeakReport{}, err
	}
	return c.CheckLeaks(context.Background(), id, func(context.Context) error { return action() }, iterations, warmup)
}

// CheckLeaks is CheckLeaks on the session sessionID; ctx bounds every
// command it sends and is passed to action.
func (c *Client) CheckLeaks(ctx context.Context, sessionID string, action func(context.Context) error, iterations, warmup int) (wire.LeakReport, error) {
	if iterations < 1 || warmup < 0 {
		return wire.LeakReport{}, fmt.Errorf("wdext: CheckLeaks needs iterations ≥ 1 and warmup ≥ 0, not %d and %d", iterations, warmup)
	}
	for range warmup {
		if err := action(ctx); err != nil {
			return wire.LeakReport{}, err
		}
	}
	if err := c.LeakStart(ctx, sessionID); err != nil {
		return wire.LeakReport{}, err
	}
	for i := range iterations {
		err := action(ctx)
		if err == nil && i < iterations-1 {
			err = c.LeakIteration(ctx, sessionID)
		}
		if err != nil {
			// End the check (allocation recording stops with it). Its
			// verdict, of a scenario cut short, means nothing, and its
			// error would hide this one.
			c.LeakStop(ctx, sessionID, max(i, 1))
			return wire.LeakReport{}, err
		}
	}
	r, err := c.LeakStop(ctx, sessionID, iterations)
	if err != nil {
		return r, err
	}
	if len(r.Leaks) > 0 {
		return r, &LeakError{Report: r}
	}
	return r, nil
}
