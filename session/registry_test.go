package session_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/session"
)

var upstream = &url.URL{Scheme: "http", Host: "127.0.0.1:9515"}

// closer counts its Close calls.
type closer struct{ n atomic.Int32 }

func (c *closer) Close() error { c.n.Add(1); return nil }

func TestRegistryBasics(t *testing.T) {
	r := session.NewRegistry()
	_, ok := r.Get("a")
	assert.Assert(t, !ok)
	a := session.New("a", upstream)
	r.Add(a)
	got, ok := r.Get("a")
	assert.Assert(t, ok)
	assert.Equal(t, got, a)
	assert.Equal(t, r.Len(), 1)
	assert.Equal(t, len(r.All()), 1)

	res := &closer{}
	v, err := a.Resource("cdp", func() (io.Closer, error) { return res, nil })
	assert.NilError(t, err)
	assert.Equal(t, v, io.Closer(res))
	// Opened once, then reused.
	v, err = a.Resource("cdp", func() (io.Closer, error) { t.Fatal("opened twice"); return nil, nil })
	assert.NilError(t, err)
	assert.Equal(t, v, io.Closer(res))
	// A failed open is not remembered.
	_, err = a.Resource("other", func() (io.Closer, error) { return nil, errors.New("no") })
	assert.ErrorContains(t, err, "no")

	assert.Assert(t, r.Remove("a"))
	assert.Assert(t, !r.Remove("a"))
	assert.Equal(t, res.n.Load(), int32(1))
	assert.Equal(t, r.Len(), 0)
	_, err = a.Resource("cdp", func() (io.Closer, error) { return &closer{}, nil })
	assert.Equal(t, err, session.ErrClosed)
}

func TestRegistryAddReplaces(t *testing.T) {
	r := session.NewRegistry()
	old := session.New("a", upstream)
	r.Add(old)
	res := &closer{}
	old.Resource("k", func() (io.Closer, error) { return res, nil })
	r.Add(old) // the same record again: nothing closes
	assert.Equal(t, res.n.Load(), int32(0))
	r.Add(session.New("a", upstream))
	assert.Equal(t, res.n.Load(), int32(1))
	assert.Equal(t, r.Len(), 1)
}

func TestDropResource(t *testing.T) {
	s := session.New("a", upstream)
	first := &closer{}
	s.Resource("k", func() (io.Closer, error) { return first, nil })
	s.DropResource("k")
	s.DropResource("k")
	assert.Equal(t, first.n.Load(), int32(1))
	second := &closer{}
	v, err := s.Resource("k", func() (io.Closer, error) { return second, nil })
	assert.NilError(t, err)
	assert.Equal(t, v, io.Closer(second))
}

func TestDead(t *testing.T) {
	s := session.New("a", upstream)
	assert.Assert(t, !s.Dead(), "a session of an unmanaged driver never dies")
	gone := make(chan struct{})
	s.Gone = gone
	assert.Assert(t, !s.Dead())
	close(gone)
	assert.Assert(t, s.Dead())
}

// Many goroutines add, use, touch and remove overlapping sessions: under
// -race nothing races, and every resource opened is closed exactly once.
func TestRegistryConcurrent(t *testing.T) {
	r := session.NewRegistry()
	const workers, rounds, ids = 8, 300, 5
	var opened sync.Map // *closer → struct{}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				id := fmt.Sprint("s", (w+i)%ids)
				switch i % 8 {
				case 0:
					r.Add(session.New(id, upstream))
				case 1, 5, 6:
					if s, ok := r.Get(id); ok {
						s.Touch()
						s.Resource((w+i)%3, func() (io.Closer, error) {
							c := &closer{}
							opened.Store(c, struct{}{})
							return c, nil
						})
					}
				case 2:
					for _, s := range r.All() {
						s.Touch()
						_ = s.Dead()
					}
					_ = r.Len()
				case 3:
					if s, ok := r.Get(id); ok {
						s.DropResource(w % 2)
					}
				case 4:
					r.Remove(id)
				case 7:
					runtime.Gosched()
				}
			}
		}()
	}
	wg.Wait()
	for _, s := range r.All() {
		r.Remove(s.ID)
	}
	assert.Equal(t, r.Len(), 0)
	n := 0
	opened.Range(func(k, _ any) bool {
		n++
		assert.Equal(t, k.(*closer).n.Load(), int32(1), "a resource closed %d times", k.(*closer).n.Load())
		return true
	})
	t.Logf("%d resources opened and closed", n)
}

// ExpireIdle hands over sessions idle longer than the timeout, and stops
// with its context.
func TestExpireIdle(t *testing.T) {
	r := session.NewRegistry()
	idle := session.New("idle", upstream)
	busy := session.New("busy", upstream)
	r.Add(idle)
	r.Add(busy)

	ctx, cancel := context.WithCancel(context.Background())
	expired := make(chan string, 10)
	done := make(chan struct{})
	const timeout = time.Second
	go func() {
		defer close(done)
		r.ExpireIdle(ctx, timeout, 10*time.Millisecond, func(_ context.Context, s *session.Session) {
			// Removed before it is reported: the test looks it up next.
			r.Remove(s.ID)
			expired <- s.ID
		})
	}()
	// Keep busy in use until idle has gone.
	var got string
	for got == "" {
		busy.Touch()
		select {
		case got = <-expired:
		case <-time.After(timeout / 50):
		}
	}
	assert.Equal(t, got, "idle")
	_, ok := r.Get("idle")
	assert.Assert(t, !ok)
	_, ok = r.Get("busy")
	assert.Assert(t, ok)

	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("ExpireIdle did not stop with its context")
	}
}

// A resource's open runs without the session's lock: a slow open (a dial
// to a browser) delays neither Touch nor another resource of the same
// session; of two first uses racing, one resource is kept and the other
// closed; a session that ends during an open closes what it opened.
func TestResourceOpenHoldsNoLock(t *testing.T) {
	s := session.New("s", upstream)
	release := make(chan struct{})
	opened := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := s.Resource("slow", func() (io.Closer, error) {
			close(opened)
			<-release
			return &closer{}, nil
		})
		done <- err
	}()
	<-opened
	touched := make(chan struct{})
	go func() {
		s.Touch()
		s.Resource("other", func() (io.Closer, error) { return &closer{}, nil })
		close(touched)
	}()
	select {
	case <-touched:
	case <-time.After(5 * time.Second):
		t.Fatal("Touch waited for another resource's open")
	}
	close(release)
	assert.NilError(t, <-done)

	// Racing first uses: one is kept, the loser is closed.
	a, b := &closer{}, &closer{}
	ra, err := s.Attach("race", a)
	assert.NilError(t, err)
	rb, err := s.Attach("race", b)
	assert.NilError(t, err)
	assert.Assert(t, ra == rb && ra == io.Closer(a))
	assert.Assert(t, b.n.Load() == 1 && a.n.Load() == 0)

	// Ended while opening: what was opened is closed, and the caller told.
	r := session.NewRegistry()
	s2 := session.New("s2", upstream)
	r.Add(s2)
	late := &closer{}
	_, err = s2.Resource("late", func() (io.Closer, error) {
		r.Remove("s2")
		return late, nil
	})
	assert.ErrorIs(t, err, session.ErrClosed)
	assert.Assert(t, late.n.Load() == 1)
}

// A command under way keeps its session from expiring however long it
// takes; once it ends the idle clock starts, and a session found idle
// takes no new command.
func TestBusyIsNeverIdle(t *testing.T) {
	r := session.NewRegistry()
	s := session.New("s", upstream)
	r.Add(s)
	end, ok := s.Begin()
	assert.Assert(t, ok)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	expired := make(chan string, 1)
	const timeout = 50 * time.Millisecond
	go r.ExpireIdle(ctx, timeout, 5*time.Millisecond, func(_ context.Context, s *session.Session) {
		r.Note(s.ID, "idle")
		r.Remove(s.ID)
		expired <- s.ID
	})
	select {
	case id := <-expired:
		t.Fatalf("session %s expired while a command ran", id)
	case <-time.After(10 * timeout):
	}
	end()
	end() // twice is once
	select {
	case <-expired:
	case <-time.After(10 * time.Second):
		t.Fatal("session did not expire after its command ended")
	}
	_, ok = s.Begin()
	assert.Assert(t, !ok, "a command began on an expired session")
	why, ok := r.Why("s")
	assert.Assert(t, ok)
	assert.Equal(t, why, "idle")
}

// The registry remembers why it ended only the most recent sessions.
func TestWhyIsBounded(t *testing.T) {
	r := session.NewRegistry()
	for i := range 2000 {
		r.Note(fmt.Sprint(i), "reason")
	}
	_, ok := r.Why("0")
	assert.Assert(t, !ok)
	_, ok = r.Why("1999")
	assert.Assert(t, ok)
}

func TestReserveLimit(t *testing.T) {
	r := session.NewRegistry()
	rel, ok := r.Reserve()
	assert.Assert(t, ok, "no limit")
	rel()
	r.SetLimit(2)
	a, ok := r.Reserve()
	assert.Assert(t, ok)
	r.Add(session.New("a", nil))
	a()
	a() // twice is once
	b, ok := r.Reserve()
	assert.Assert(t, ok)
	used, limit := r.Capacity()
	assert.Equal(t, used, 2)
	assert.Equal(t, limit, 2)
	_, ok = r.Reserve()
	assert.Assert(t, !ok, "full: one live, one being created")
	b() // not created
	c, ok := r.Reserve()
	assert.Assert(t, ok)
	c()
	r.Remove("a")
	used, _ = r.Capacity()
	assert.Equal(t, used, 0)
}
