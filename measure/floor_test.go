package measure

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/barriertune/barriertune/osal"
)

// TestFloorIsOneWayFlagSignal checks the floor's shape: each round trip is
// one signal each way on two flags with one writer each (rank 0 writes
// only ping, rank 1 only pong, each flag holds the episode count), other
// ranks sit out, and the time is halved (one-way).
func TestFloorIsOneWayFlagSignal(t *testing.T) {
	w := pingPongWorkload()
	if w.divisor != 2 || !w.keep || w.offset != 0 {
		t.Fatalf("floor workload divisor %v keep %v offset %v: want one-way (2), never dropped, no offset", w.divisor, w.keep, w.offset)
	}
	f := &flagSignal{}
	for _, k := range []int{1, 7, 1000} {
		before := f.ping.v
		var wg sync.WaitGroup
		for rank := 0; rank < 3; rank++ { // rank 2 must return at once
			wg.Add(1)
			go func() { defer wg.Done(); f.run(rank, k) }()
		}
		wg.Wait()
		if f.ping.v-before != uint64(k) || f.pong.v != f.ping.v || f.sent.v != f.ping.v || f.seen.v != f.pong.v {
			t.Fatalf("after %d round trips: ping %d pong %d sent %d seen %d, want each %d more than before (one signal each way per trip)",
				k, f.ping.v, f.pong.v, f.sent.v, f.seen.v, before+uint64(k))
		}
	}
}

// TestFloorLinesApart: the two flags and the two ranks' counts are on four
// different cache lines. Counts sharing a line with each other or with a
// flag add a line transfer per signal, and the floor then exceeds the
// barriers it should bound (the old floor did: about 1.3x a two-thread
// dissemination barrier).
func TestFloorLinesApart(t *testing.T) {
	var f flagSignal
	offs := []uintptr{
		unsafe.Offsetof(f.ping) + unsafe.Offsetof(f.ping.v),
		unsafe.Offsetof(f.pong) + unsafe.Offsetof(f.pong.v),
		unsafe.Offsetof(f.sent) + unsafe.Offsetof(f.sent.v),
		unsafe.Offsetof(f.seen) + unsafe.Offsetof(f.seen.v),
	}
	for i := range offs {
		for j := i + 1; j < len(offs); j++ {
			if d := max(offs[i], offs[j]) - min(offs[i], offs[j]); d < osal.CacheLinePad {
				t.Errorf("words %d and %d are %d bytes apart, want at least %d (one cache line each)", i, j, d, osal.CacheLinePad)
			}
		}
	}
}
