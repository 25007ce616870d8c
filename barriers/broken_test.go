package barriers

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/barriertune/barriertune/internal/osal"
)

// brokenPolicies lists the policies a broken-barrier test runs under.
var brokenPolicies = []Policy{AutoPolicy, Spin, Yield, Park}

// forEach runs f for every algorithm and (for spinning ones) every policy,
// with n participants. With stress it leaves out pure spin where the
// participants outnumber the CPUs (episodes then cost scheduler ticks).
func forEach(t *testing.T, n int, stress bool, f func(t *testing.T, b Barrier)) {
	for _, a := range Algorithms() {
		for _, p := range brokenPolicies {
			if !a.Spins && p != AutoPolicy {
				continue
			}
			if stress && p == Spin && osal.Oversubscribed(n) {
				continue
			}
			t.Run(fmt.Sprintf("%s/policy=%s", a.Name, p), func(t *testing.T) {
				b, err := a.New(n, WithPolicy(p), WithSpinBudget(16))
				if err != nil {
					t.Fatal(err)
				}
				f(t, b)
			})
		}
	}
}

// collect waits for n results or fails after a generous deadline (a hang
// detector, not a speed bound).
func collect(t *testing.T, errs <-chan error, n int) []error {
	t.Helper()
	var out []error
	deadline := time.After(20 * time.Second)
	for len(out) < n {
		select {
		case err := <-errs:
			out = append(out, err)
		case <-deadline:
			t.Fatalf("only %d of %d waiters returned: the break did not release them", len(out), n)
		}
	}
	return out
}

// settle gives waiters time to block: it is not needed for correctness (a waiter arriving after Break
// also fails), only to exercise waking.
func settle() { time.Sleep(2 * time.Millisecond) }

func TestBreakReleasesWaiters(t *testing.T) {
	// n = 3 under every policy, the root missing; n = 9 (deeper trees,
	// more rounds), a leaf missing, so its parent waits for it (MCS's exact
	// wait), where pure spin is not oversubscribed.
	for _, n := range []int{3, 9} {
		missing := 0
		if n > 3 {
			missing = n - 1
		}
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			forEach(t, n, n > 3, func(t *testing.T, b Barrier) {
				errs := make(chan error, n)
				for id := 0; id < n; id++ {
					if id != missing {
						go func() { errs <- b.WaitContext(context.Background(), id) }()
					}
				}
				settle()
				b.Break()
				for _, err := range collect(t, errs, n-1) {
					if !errors.Is(err, ErrBroken) {
						t.Errorf("waiter got %v, want an error wrapping ErrBroken", err)
					}
				}
				if err := b.WaitContext(context.Background(), missing); !errors.Is(err, ErrBroken) {
					t.Errorf("WaitContext after Break = %v, want ErrBroken", err)
				}
				b.Break() // idempotent
			})
		})
	}
}

func TestWaitPanicsWhenBroken(t *testing.T) {
	const n = 2
	forEach(t, n, true, func(t *testing.T, b Barrier) {
		// A waiter blocked in Wait panics when the barrier breaks.
		errs := make(chan error, 1)
		go func() {
			defer func() {
				err, _ := recover().(error)
				errs <- err
			}()
			b.Wait(1)
		}()
		settle()
		b.Break()
		if err := collect(t, errs, 1)[0]; !errors.Is(err, ErrBroken) {
			t.Errorf("blocked Wait panicked with %v, want an error wrapping ErrBroken", err)
		}
		// A later Wait panics at once.
		func() {
			defer func() {
				if err, _ := recover().(error); !errors.Is(err, ErrBroken) {
					t.Errorf("Wait on a broken barrier panicked with %v, want ErrBroken", err)
				}
			}()
			b.Wait(0)
		}()
	})
}

func TestContextCancelBreaks(t *testing.T) {
	const n = 3
	forEach(t, n, true, func(t *testing.T, b Barrier) {
		ctx, cancel := context.WithCancel(context.Background())
		mine := make(chan error, 1)
		others := make(chan error, n)
		go func() { mine <- b.WaitContext(ctx, 0) }()
		for id := 1; id < n-1; id++ { // participant n-1 never arrives
			go func() { others <- b.WaitContext(context.Background(), id) }()
		}
		settle()
		cancel()
		if err := collect(t, mine, 1)[0]; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled caller got %v, want context.Canceled", err)
		}
		for _, err := range collect(t, others, n-2) {
			if !errors.Is(err, ErrBroken) {
				t.Errorf("other waiter got %v, want ErrBroken", err)
			}
		}
		// An already-ended ctx breaks a fresh barrier without waiting.
		b.Reset()
		if err := b.WaitContext(ctx, 1); !errors.Is(err, context.Canceled) {
			t.Errorf("WaitContext with an ended ctx = %v, want context.Canceled", err)
		}
		if err := b.WaitContext(context.Background(), 2); !errors.Is(err, ErrBroken) {
			t.Errorf("after an ended ctx, WaitContext = %v, want ErrBroken", err)
		}
	})
}

// TestBreakMidEpisodeThenReset runs participants through episodes, breaks
// the barrier at a random point while some are mid-episode, checks that
// every participant returns (ErrBroken, or nil for episodes that
// completed), resets it and checks a full stress run. Goroutines must not
// leak.
func TestBreakMidEpisodeThenReset(t *testing.T) {
	n := 4
	if testing.Short() {
		n = 3
	}
	before := runtime.NumGoroutine()
	forEach(t, n, true, func(t *testing.T, b Barrier) {
		for round := 0; round < 3; round++ {
			var wg sync.WaitGroup
			var mu sync.Mutex
			bad := 0
			for id := 0; id < n; id++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for e := 0; ; e++ {
						err := b.WaitContext(context.Background(), id)
						if err == nil {
							continue
						}
						if !errors.Is(err, ErrBroken) {
							mu.Lock()
							bad++
							mu.Unlock()
						}
						return
					}
				}()
			}
			time.Sleep(time.Duration(round+1) * time.Millisecond)
			b.Break()
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("participants did not all return after Break")
			}
			if bad > 0 {
				t.Fatalf("%d participants got an error other than ErrBroken", bad)
			}
			b.Reset()
			checkBarrier(t, b, n, 20, int64(round))
		}
	})
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := runtime.NumGoroutine(); got > before {
		t.Errorf("%d goroutines before, %d after: a waiter leaked", before, got)
	}
}

// TestWaitContextNilDone checks that WaitContext with a ctx that cannot
// end completes episodes like Wait, and with a live ctx too.
func TestWaitContextCompletes(t *testing.T) {
	const n = 2
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	forEach(t, n, true, func(t *testing.T, b Barrier) {
		var wg sync.WaitGroup
		errs := make(chan error, 2*n*50)
		for id := 0; id < n; id++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for e := 0; e < 50; e++ {
					c := context.Background()
					if (e+id)%2 == 0 {
						c = ctx
					}
					if err := b.WaitContext(c, id); err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("WaitContext = %v, want nil", err)
		}
	})
}

func TestSameIDDetectedByBlocking(t *testing.T) {
	for _, name := range []string{"cond", "channel"} {
		t.Run(name, func(t *testing.T) {
			b, err := New(name, 3)
			if err != nil {
				t.Fatal(err)
			}
			go func() { _ = b.WaitContext(context.Background(), 1) }()
			for i := 0; i < 1000; i++ {
				settle()
				if waiting(b) == 1 {
					break
				}
			}
			func() {
				defer func() {
					msg, _ := recover().(string)
					if msg == "" {
						t.Errorf("a second Wait(1) in the same episode did not panic")
					}
				}()
				b.Wait(1)
			}()
			b.Break()
		})
	}
}

// waiting returns how many participants wait in a blocking baseline.
func waiting(b Barrier) int {
	switch c := b.(type) {
	case *condBarrier:
		c.a.mu.Lock()
		defer c.a.mu.Unlock()
		return c.a.count
	case *channelBarrier:
		c.a.mu.Lock()
		defer c.a.mu.Unlock()
		return c.a.count
	}
	return -1
}
