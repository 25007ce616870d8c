//go:build linux

package osal

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/barriertune/barriertune/internal/spin"
)

// storeBuffering runs the store-buffering litmus test the sleep and wake
// protocol of the barriers package must survive, rounds times: the light
// side (a setter) makes a plain store to x, then a plain load of y; the
// heavy side (a sleeper) makes a sequentially consistent store to y,
// then, with heavy, HeavyFence, then a load of x. It returns the rounds in
// which neither saw the other's store: a lost wake-up, had x been a flag
// and y its sleeper count. The light side starts each round after a delay
// that sweeps 0..63 relax hints, so that the two sides meet at every
// offset.
func storeBuffering(rounds int, heavy bool) (missed int) {
	type line struct {
		v atomic.Uint64
		_ [CacheLinePad - 8]byte
	}
	var y, round, done line
	var x struct {
		v uint64 // stored plainly (spin.StoreRelease), loaded atomically
		_ [CacheLinePad - 8]byte
	}
	finished := make(chan struct{})
	go func() { // the heavy side
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(finished)
		for i := uint64(1); i <= uint64(rounds); i++ {
			for round.v.Load() < i {
				Relax()
			}
			y.v.Store(i)
			if heavy {
				HeavyFence()
			}
			if atomic.LoadUint64(&x.v) < i {
				done.v.Store(2*i + 1) // saw nothing
			} else {
				done.v.Store(2 * i)
			}
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i := uint64(1); i <= uint64(rounds); i++ {
		round.v.Store(i)
		for d := i % 64; d > 0; d-- {
			Relax()
		}
		spin.StoreRelease(&x.v, i) // a plain store: no fence before the load
		sawY := y.v.Load() >= i
		for done.v.Load() < 2*i {
			Relax()
		}
		if !sawY && done.v.Load()&1 == 1 {
			missed++
		}
	}
	<-finished
	return missed
}

// TestHeavyFenceOrdersTheLightSide: with HeavyFence on the heavy side, no
// round of the store-buffering test loses both stores, whatever the light
// side's timing; without it, the test logs how often a round did on this
// machine (the reordering x86 allows: the plain load passes the plain
// store), which is what an unfenced setter and sleeper could lose.
func TestHeavyFenceOrdersTheLightSide(t *testing.T) {
	if !HeavyFenceAvailable() {
		t.Skip("membarrier's private expedited command is unavailable here")
	}
	if runtime.GOMAXPROCS(0) < 2 || runtime.NumCPU() < 2 {
		t.Skip("the two sides must run at once: needs 2 CPUs and GOMAXPROCS >= 2")
	}
	rounds := 5000
	if testing.Short() {
		rounds = 1000
	}
	if m := storeBuffering(rounds, true); m != 0 {
		t.Errorf("with HeavyFence, %d of %d rounds saw neither store (want none)", m, rounds)
	}
	t.Logf("without it, %d of %d rounds saw neither store", storeBuffering(rounds*10, false), rounds*10)
}
