package measure

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/barriertune/barriertune/barriers"
)

// TestFloorIsTwoThreadFlagBarrier checks the floor's shape: the workload
// is a two-participant spinning FloorAlgorithm barrier run by ranks 0 and
// 1 (other ranks sit out), one episode per time unit (no halving, no
// offset), never dropped; and FloorAlgorithm with two participants is a
// single round of one flag each way (dissemination: ⌈log₂ 2⌉ = 1 round,
// each participant signalling the other).
func TestFloorIsTwoThreadFlagBarrier(t *testing.T) {
	if FloorAlgorithm != "dissemination" {
		t.Fatalf("FloorAlgorithm %q: the shape below is argued for dissemination", FloorAlgorithm)
	}
	ws, err := floorWorkloads()
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != floorInstances {
		t.Fatalf("%d floor workloads, want %d", len(ws), floorInstances)
	}
	for _, w := range ws {
		if w.divisor != 1 || !w.keep || w.offset != 0 {
			t.Fatalf("floor workload divisor %v keep %v offset %v: want one episode per unit, never dropped, no offset", w.divisor, w.keep, w.offset)
		}
	}
	w := ws[0]
	// Ranks 0 and 1 meet k times; a third rank must return at once (a
	// barrier of 2 waited on by 3 would hang or panic). Spinning needs
	// two Ps to be quick, as the floor itself does.
	ks := []int{1, 7, 1000}
	if runtime.GOMAXPROCS(0) < 2 {
		ks = []int{1, 3}
	}
	for _, k := range ks {
		var wg sync.WaitGroup
		done := make(chan struct{})
		for rank := 0; rank < 3; rank++ {
			wg.Add(1)
			go func() { defer wg.Done(); w.run(rank, k) }()
		}
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%d floor episodes did not finish", k)
		}
	}
	// Two participants cannot wait on different episodes: a rank that
	// runs ahead blocks until the other catches up.
	b, err := barriers.New(FloorAlgorithm, 2, barriers.WithPolicy(barriers.Spin))
	if err != nil {
		t.Fatal(err)
	}
	arrived := make(chan struct{})
	left := make(chan struct{})
	go func() { b.Wait(0); close(left) }()
	select {
	case <-left:
		t.Fatal("rank 0 left the floor barrier before rank 1 arrived: not a barrier")
	case <-time.After(20 * time.Millisecond):
	}
	go func() { close(arrived); b.Wait(1) }()
	<-arrived
	<-left
}

func TestWarmup(t *testing.T) {
	for _, tc := range []struct{ k, want int }{{1, 1}, {7, 1}, {8, 1}, {16, 2}, {1 << 20, 1 << 17}} {
		if got := warmup(tc.k); got != tc.want {
			t.Errorf("warmup(%d) = %d, want %d", tc.k, got, tc.want)
		}
	}
}

// TestFloorSamplesTakeEachRoundsFastest: the floor's sample of a round is
// the least of the instances' samples of that round, over the rounds all
// of them have.
func TestFloorSamplesTakeEachRoundsFastest(t *testing.T) {
	got := floorSamples([][]float64{{50, 52, 300, 49}, {51, 150, 60, 48}, {140, 53, 61}})
	want := []float64{50, 52, 60}
	if len(got) != len(want) {
		t.Fatalf("floor samples %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("floor samples %v, want %v", got, want)
		}
	}
	if floorSamples(nil) != nil {
		t.Error("no instances, no samples")
	}
}

// TestFloorInstancesShareOneSample: the floor's instances together take
// one sample target per round, as a single floor did, so a check's time
// estimate holds.
func TestFloorInstancesShareOneSample(t *testing.T) {
	ws, err := floorWorkloads()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, w := range ws {
		total += w.fraction()
	}
	if total < 0.999 || total > 1.001 {
		t.Errorf("floor instances take %v sample targets per round, want 1", total)
	}
	if (workload{}).fraction() != 1 {
		t.Error("a workload without a share takes the whole sample target")
	}
}

// TestCalibrateConfirms: a run that reaches the sample target settles k
// only when the run before it, of the same k, reached it too; a slow first
// run (a single episode after the team's start) is timed again and k grows
// when the repeat is fast.
func TestCalibrateConfirms(t *testing.T) {
	const target = 200e3
	k, reached := 1, false
	// The first episode takes 300 µs (cold start), every later one 100 ns.
	for steps := 0; ; steps++ {
		if steps > 64 {
			t.Fatal("calibration did not settle")
		}
		el := float64(k) * 100
		if steps == 0 {
			el = 300e3
		}
		next, r := calibrate(k, el, target, reached)
		if next == 0 {
			break
		}
		k, reached = next, r
	}
	if k < 2000 {
		t.Errorf("settled on k = %d after a slow first run; want the k whose runs take the target (2000 or more)", k)
	}
	// A workload whose every episode takes the whole target settles on one
	// episode after a confirming repeat.
	if next, r := calibrate(1, 300e3, target, false); next != 1 || !r {
		t.Errorf("first slow run: next %d reached %v, want 1 true (repeat)", next, r)
	}
	if next, _ := calibrate(1, 300e3, target, true); next != 0 {
		t.Errorf("confirmed slow run: next %d, want 0 (settle)", next)
	}
	if next, _ := calibrate(1<<24, 1, target, false); next != 0 {
		t.Errorf("k at its cap: next %d, want 0", next)
	}
}
