package barriers

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/barriertune/barriertune/internal/osal"
)

// lostWakeupWatchdog is how long a wait may go without any participant
// finishing an episode before the stress test calls it a lost wake-up.
const lostWakeupWatchdog = 2 * time.Second

// TestNoLostWakeup forces nearly every wait that is not already satisfied
// to sleep (a spin budget of 1 relax hint: with 0 the flag would be armed,
// see flag.sleep, and the setters fence), with no timed backstop behind
// the sleep (and with 0, the armed flag's path): a release that misses a sleeper's announcement leaves the
// sleeper asleep with its flag set, and the watchdog reports it (then
// breaks the barrier to end the test). Under AutoPolicy the setter's
// store and load have no fence between them; the sleeper's heavy fence
// (flag.sleep) is what keeps them from missing each other.
func TestNoLostWakeup(t *testing.T) {
	run := 250 * time.Millisecond
	if testing.Short() {
		run = 60 * time.Millisecond
	}
	for _, name := range []string{"dissemination", "central", "static-tree", "mcs"} {
		for _, c := range []struct{ n, budget int }{{2, 1}, {3, 1}, {2, 0}} {
			n := c.n
			t.Run(fmt.Sprintf("%s/n=%d/budget=%d", name, n, c.budget), func(t *testing.T) {
				b, err := New(name, n, WithSpinBudget(c.budget))
				if err != nil {
					t.Fatal(err)
				}
				waits, msg := stressForLostWakeup(b, n, run)
				if msg != "" {
					t.Fatal(msg)
				}
				t.Logf("%d waits, %d wake-ups", waits, wakeups(b))
			})
		}
	}
}

// stressForLostWakeup runs n goroutines through b's episodes for about
// run and returns how many waits returned and "" or a description of the lost wake-up the watchdog
// saw: no episode finished within lostWakeupWatchdog while sleepers
// waited on flags whose values had reached them.
func stressForLostWakeup(b Barrier, n int, run time.Duration) (waits int64, msg string) {
	var progress atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for id := 0; id < n; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if b.WaitContext(context.Background(), id) != nil {
					return // broken by the watchdog
				}
				progress.Add(1)
			}
		}()
	}
	// Every participant checks stop between episodes; one that stops
	// leaves the others waiting for it, so stop is followed by Break once
	// the episode in flight had its chance to end.
	last, lastAt := progress.Load(), time.Now()
	for start := time.Now(); ; {
		time.Sleep(20 * time.Millisecond)
		if p := progress.Load(); p != last {
			last, lastAt = p, time.Now()
			if time.Since(start) >= run {
				break
			}
			continue
		}
		if time.Since(lastAt) >= lostWakeupWatchdog {
			msg = fmt.Sprintf("lost wake-up: no episode finished for %v after %d waits; %s", lostWakeupWatchdog, last, flagStates(b))
			break
		}
	}
	close(stop)
	time.Sleep(10 * time.Millisecond)
	b.Break()
	wg.Wait()
	return progress.Load(), msg
}

// flagStates describes b's flags that have sleepers: value and count.
func flagStates(b Barrier) string {
	h, ok := b.(interface{ self() *base })
	if !ok {
		return "(no flags)"
	}
	var parts []string
	for i, fs := range h.self().flagSets {
		for j := range fs {
			if p := atomic.LoadInt32(&fs[j].parked) &^ fenced; p != 0 {
				parts = append(parts, fmt.Sprintf("flag %d.%d = %d with %d asleep", i, j, fs[j].v.Load(), p))
			}
		}
	}
	if len(parts) == 0 {
		return "no sleepers"
	}
	return strings.Join(parts, ", ")
}

// wakeups sums the wake-ups of sleepers on b's flags (flag.wakeups).
func wakeups(b Barrier) int {
	bs := b.(interface{ self() *base }).self()
	total := 0
	for _, fs := range bs.flagSets {
		for i := range fs {
			fs[i].mu.Lock()
			total += fs[i].wakeups
			fs[i].mu.Unlock()
		}
	}
	return total
}

// TestLatePartnerWakesOnce: a waiter whose partner comes 300 ms late wakes
// at most twice per episode (with no timed backstop, once: when
// released), and the process uses at most a small share of a CPU while it
// waits (the budget below: 1% of the wait, plus the partner's own
// sleeping and the runtime's background work, which rusage counts too).
func TestLatePartnerWakesOnce(t *testing.T) {
	const late, eps = 300 * time.Millisecond, 3
	if testing.Short() {
		t.Skip("takes about a second")
	}
	b, err := New("dissemination", 2)
	if err != nil {
		t.Fatal(err)
	}
	before := wakeups(b)
	cpu0 := processCPU()
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range eps {
			b.Wait(0)
		}
	}()
	for range eps {
		time.Sleep(late)
		b.Wait(1)
	}
	<-done
	wall, cpu := time.Since(start), processCPU()-cpu0
	w := wakeups(b) - before
	t.Logf("%d episodes, partner %v late: %d wake-ups, %v of CPU in %v (%.2f%%), GOMAXPROCS %d",
		eps, late, w, cpu, wall, 100*float64(cpu)/float64(wall), runtime.GOMAXPROCS(0))
	if w > 2*eps {
		t.Errorf("%d wake-ups in %d episodes whose partner was %v late, want at most 2 per episode", w, eps, late)
	}
	if share := float64(cpu) / float64(wall); share > 0.02 {
		t.Errorf("the process used %v of CPU in %v (%.1f%%) while one participant waited for a late partner, want at most 2%% (1%% for the waiter, the rest the runtime's)",
			cpu, wall, 100*share)
	}
}

// TestOutnumberedWaitersDoNotSpin: with more AutoPolicy barriers' waiters
// in the process than CPUs it runs at once, waits do not spin (counted by
// adaptive.outnumbered), though each barrier alone fits; with one waiter,
// none is counted; and the process's count of waiters returns to 0.
func TestOutnumberedWaitersDoNotSpin(t *testing.T) {
	if osal.Oversubscribed(2) {
		t.Skip("needs 2 CPUs and GOMAXPROCS >= 2: a pair of participants must fit for AutoPolicy's bound")
	}
	run := func(pairs int) int32 {
		bs := make([]Barrier, pairs)
		for i := range bs {
			b, err := New("dissemination", 2)
			if err != nil {
				t.Fatal(err)
			}
			bs[i] = b
		}
		var wg sync.WaitGroup
		for _, b := range bs {
			wg.Add(2)
			go func() { defer wg.Done(); b.Wait(0) }()
			go func() { defer wg.Done(); time.Sleep(30 * time.Millisecond); b.Wait(1) }()
		}
		wg.Wait()
		var n int32
		for _, b := range bs {
			n += b.(*dissemination).w.adapt.outnumbered.Load()
		}
		return n
	}
	if n := run(1); n != 0 {
		t.Errorf("one waiting pair: %d waits counted as outnumbered, want 0", n)
	}
	cpus := int(runCPUs(osal.Nanotime()))
	if n := run(cpus + 2); n == 0 {
		t.Errorf("%d pairs' waiters on %d CPUs: no wait counted as outnumbered", cpus+2, cpus)
	}
	if w := sharing.waiting.Load(); w != 0 {
		t.Errorf("the process's count of waiters is %d after every wait returned, want 0", w)
	}
}
