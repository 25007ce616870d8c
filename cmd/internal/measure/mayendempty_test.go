package measure

import (
	"context"
	"testing"

	"github.com/barriertune/barriertune/barriers"
)

// TestMayEndEmptyStopsTheFirstRound: with MayEndEmpty a cancelled context
// stops inside calibration, before any sample, so a round that would
// outlast the budget (hundreds of OS threads) is not run to its end;
// without it every candidate still takes its one sample (TestContextStops).
func TestMayEndEmptyStopsTheFirstRound(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cands := []Candidate{{Algorithm: "central", Policy: barriers.AutoPolicy}, {Algorithm: "dissemination", Policy: barriers.AutoPolicy}}
	run, err := Barriers([]int{0}, cands, Options{Samples: 50, Context: ctx, MayEndEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range run.Results {
		if r.Reps != 0 {
			t.Errorf("%s: %d samples after a cancelled context with MayEndEmpty, want 0", r.Algorithm, r.Reps)
		}
	}
	run, err = Barriers([]int{0}, cands, Options{Samples: 50, Context: ctx})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range run.Results {
		if r.Reps < 1 {
			t.Errorf("%s: %d samples without MayEndEmpty, want at least 1", r.Algorithm, r.Reps)
		}
	}
}
