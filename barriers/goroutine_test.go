package barriers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/barriertune/barriertune/internal/osal"
)

func newGoroutineT(t *testing.T, n int, opts ...Option) *goroutineBarrier {
	t.Helper()
	b, err := New("goroutine", n, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return b.(*goroutineBarrier)
}

// waitAll starts ids' WaitContext calls and returns their results, in id
// order, once all have returned.
func waitAll(ctxs []context.Context, b *goroutineBarrier, ids ...int) <-chan []error {
	out := make(chan []error, 1)
	go func() {
		errs := make([]error, len(ids))
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = b.WaitContext(ctxs[i], id)
			}()
		}
		wg.Wait()
		out <- errs
	}()
	return out
}

func background(k int) []context.Context {
	c := make([]context.Context, k)
	for i := range c {
		c[i] = context.Background()
	}
	return c
}

// arrivedEventually waits until k participants have arrived in the current
// episode (they may still spin or yield; Break and a cancelled context
// must wake them either way).
func arrivedEventually(t *testing.T, b *goroutineBarrier, k int) {
	t.Helper()
	for b.arrived.Load() < int64(k) {
		time.Sleep(100 * time.Microsecond)
	}
}

func TestGoroutineBreakReleasesWaiters(t *testing.T) {
	for _, p := range []Policy{AutoPolicy, Spin, Yield, Park} {
		t.Run(p.String(), func(t *testing.T) {
			b := newGoroutineT(t, 4, WithPolicy(p))
			res := waitAll(background(3), b, 0, 1, 2)
			arrivedEventually(t, b, 3)
			b.Break()
			for id, err := range <-res {
				if !errors.Is(err, ErrBroken) {
					t.Errorf("participant %d: WaitContext = %v, want the broken-barrier error", id, err)
				}
			}
			if err := b.WaitContext(context.Background(), 3); !errors.Is(err, ErrBroken) {
				t.Errorf("WaitContext on a broken barrier = %v", err)
			}
			func() {
				defer func() {
					if err, _ := recover().(error); !errors.Is(err, ErrBroken) {
						t.Errorf("Wait on a broken barrier panicked with %v", err)
					}
				}()
				b.Wait(3)
			}()
			b.Reset()
			if e := b.Episodes(0); e != 0 {
				t.Errorf("Episodes(0) = %d after Reset", e)
			}
			if p == Spin && osal.Oversubscribed(4) {
				return // pure spin past GOMAXPROCS progresses at preemption speed
			}
			checkBarrier(t, b, 4, 20, 5)
		})
	}
}

func TestGoroutineCancelBreaks(t *testing.T) {
	b := newGoroutineT(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	res := waitAll([]context.Context{ctx, context.Background()}, b, 0, 1)
	arrivedEventually(t, b, 2)
	cancel()
	errs := <-res
	if !errors.Is(errs[0], context.Canceled) {
		t.Errorf("the cancelled participant got %v, want context.Canceled", errs[0])
	}
	if !errors.Is(errs[1], ErrBroken) {
		t.Errorf("the other participant got %v, want the broken-barrier error", errs[1])
	}
	b.Reset()
	checkBarrier(t, b, 3, 20, 6)
}

func TestGoroutineExpiredContext(t *testing.T) {
	b := newGoroutineT(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	if err := b.WaitContext(ctx, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitContext with an expired context = %v", err)
	}
	if err := b.WaitContext(context.Background(), 1); !errors.Is(err, ErrBroken) {
		t.Fatalf("after an expired context, WaitContext = %v, want broken", err)
	}
}

// TestGoroutineCancelAfterEpisode: a context that ends after its episode
// completed breaks nothing.
func TestGoroutineCancelAfterEpisode(t *testing.T) {
	const n = 3
	b := newGoroutineT(t, n)
	ctxs := make([]context.Context, n)
	cancels := make([]context.CancelFunc, n)
	for i := range ctxs {
		ctxs[i], cancels[i] = context.WithCancel(context.Background())
	}
	for e := 0; e < 50; e++ {
		for id, err := range <-waitAll(ctxs, b, 0, 1, 2) {
			if err != nil {
				t.Fatalf("episode %d: participant %d: %v", e, id, err)
			}
		}
	}
	for id := range n {
		if got := b.Episodes(id); got != 50 {
			t.Errorf("Episodes(%d) = %d after 50 episodes", id, got)
		}
	}
	for _, c := range cancels {
		c()
	}
	for id, err := range <-waitAll(background(n), b, 0, 1, 2) {
		if err != nil {
			t.Fatalf("after the contexts ended: participant %d: %v", id, err)
		}
	}
}

// TestGoroutineMixedContexts runs many episodes where some participants use
// WaitContext with live deadlines, under the stress check's invariants
// by way of a Barrier whose Wait uses WaitContext.
func TestGoroutineMixedContexts(t *testing.T) {
	for _, n := range []int{2, 5, 17} {
		t.Run(fmt.Sprint("n=", n), func(t *testing.T) {
			b := newGoroutineT(t, n)
			checkBarrier(t, ctxWaiter{b}, n, episodes(t, n), 11)
			if s := b.yieldScore.Load(); s > yieldScoreMax || s < -yieldPenalty*int64(n) {
				t.Errorf("yield score %d outside [%d, %d]", s, -yieldPenalty*n, yieldScoreMax)
			}
		})
	}
}

// ctxWaiter waits with a context for odd ids.
type ctxWaiter struct{ *goroutineBarrier }

func (c ctxWaiter) Wait(id int) {
	if id%2 == 0 {
		c.goroutineBarrier.Wait(id)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if err := c.WaitContext(ctx, id); err != nil {
		panic(err)
	}
}

func TestGoroutineOptions(t *testing.T) {
	cases := []struct {
		opts         []Option
		spin, yields int
	}{
		{[]Option{WithPolicy(Spin)}, -1, 0},
		{[]Option{WithPolicy(Yield), WithSpinBudget(5)}, 5, -1},
		{[]Option{WithPolicy(Park), WithSpinBudget(0)}, 0, 0},
	}
	for _, c := range cases {
		b := newGoroutineT(t, 3, c.opts...)
		if b.spin != c.spin || b.yields != c.yields {
			t.Errorf("spin, yields = %d, %d; want %d, %d", b.spin, b.yields, c.spin, c.yields)
		}
	}
	want := goroutineYields
	for _, n := range []int{1, 2, 1 << 10} {
		b := newGoroutineT(t, n)
		if b.spin != 0 || b.yields != want {
			t.Errorf("auto policy, n=%d: spin, yields = %d, %d; want 0, %d", n, b.spin, b.yields, want)
		}
	}
	if b := newGoroutineT(t, 2, WithSpinBudget(30)); b.spin != 30 {
		t.Errorf("auto policy with a spin budget of 30 spins %d", b.spin)
	}
}

// TestGoroutineParkStress drives the parking path (every waiter parks at
// once) and the yield-then-park mix through the stress check: a wakeup for
// one episode must never release a participant of the next.
func TestGoroutineParkStress(t *testing.T) {
	for _, n := range []int{2, 5, 17} {
		for _, yields := range []int{0, 1} {
			t.Run(fmt.Sprintf("n=%d/yields=%d", n, yields), func(t *testing.T) {
				b := newGoroutineT(t, n, WithPolicy(Park), WithSpinBudget(0))
				b.yields = yields
				checkBarrier(t, b, n, episodes(t, n), 13)
			})
		}
	}
}
