package turn

import (
	"context"
	"fmt"
)

// Turn is held by one caller at a time. The zero value is not usable:
// make one with New.
type Turn chan struct{}

// New returns a free turn.
func New() Turn { return make(Turn, 1) }

// Take waits for the turn as long as ctx allows.
func (t Turn) Take(ctx context.Context) error {
	select {
	case t <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the previous command of this kind to finish: %w", ctx.Err())
	}
}

// Give hands the turn back.
func (t Turn) Give() { <-t }

// With runs f holding t, once ctx allowed waiting for it.
func With[T any](ctx context.Context, t Turn, f func() (T, error)) (T, error) {
	if err := t.Take(ctx); err != nil {
		var zero T
		return zero, err
	}
	defer t.Give()
	return f()
}
