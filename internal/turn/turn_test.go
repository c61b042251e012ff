package turn_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wdext/wdext/internal/turn"
)

// One holder at a time; a waiter gives up at its deadline, and the turn is
// free again once handed back.
func TestTurn(t *testing.T) {
	tn := turn.New()
	if err := tn.Take(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := tn.Take(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a held turn was taken: %v", err)
	}
	tn.Give()
	got, err := turn.With(context.Background(), tn, func() (int, error) { return 7, nil })
	if got != 7 || err != nil {
		t.Fatalf("With: %v %v", got, err)
	}
	if err := tn.Take(context.Background()); err != nil {
		t.Fatalf("With did not hand the turn back: %v", err)
	}
}
