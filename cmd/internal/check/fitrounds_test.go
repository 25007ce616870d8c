package check

import (
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/configsets"
)

// TestFitRoundsRevisits: one slow round cuts the rounds to what the time
// left allows at its pace; later fast rounds restore them, up to the
// plan's and never beyond (formerly a budget of 10 s cut 9 rounds to 4
// after one slow round and finished in 7.5 s with budget left).
func TestFitRoundsRevisits(t *testing.T) {
	p := &plan{rounds: 9, units: []unit{{threads: 2, sets: make([]configsets.Set, 2)}}}
	s := &samples{slowdown: 1, total: p.placements()}
	s.fitRounds(p, 0, time.Second, 4*time.Second, 100*time.Millisecond) // 1 + 4s/1.25s = 4
	if p.rounds != 4 || !strings.Contains(s.roundsCut, "rounds cut from 9 to 4: round 1 took 1s") || s.total != 8 {
		t.Fatalf("after a slow round: %d rounds, %d passes, cut %q", p.rounds, s.total, s.roundsCut)
	}
	if s.slowdown != 10 {
		t.Errorf("slowdown %v, want 10 (1s over 100ms)", s.slowdown)
	}
	s.fitRounds(p, 1, 200*time.Millisecond, time.Second, 100*time.Millisecond) // 2 + 1s/250ms = 6
	if p.rounds != 6 || !strings.Contains(s.roundsCut, "rounds cut from 9 to 6: round 2") || s.total != 12 {
		t.Fatalf("after a faster round: %d rounds, %d passes, cut %q", p.rounds, s.total, s.roundsCut)
	}
	s.fitRounds(p, 2, 10*time.Millisecond, time.Second, 100*time.Millisecond) // far more than 9 fit
	if p.rounds != 9 || s.roundsCut != "" || s.total != 18 {
		t.Fatalf("after a fast round: %d rounds (want the plan's 9, no more), %d passes, cut %q", p.rounds, s.total, s.roundsCut)
	}
	s.fitRounds(p, 8, time.Hour, 0, 100*time.Millisecond) // the last round: nothing to fit
	if p.rounds != 9 {
		t.Errorf("after the last round: %d rounds", p.rounds)
	}
}

// TestRemainingAtMeasuredPace: the progress line's time left follows the
// passes measured (it said "about 0s left" while the check ran on, when
// the plan's estimate was low), adds what follows the rounds, and never
// exceeds the budget left.
func TestRemainingAtMeasuredPace(t *testing.T) {
	s := &samples{total: 10}
	if got := s.remaining(2*time.Second, 3*time.Second, time.Minute, 0); got != 0 {
		t.Errorf("before a pass, past the estimate: %s, want 0", got)
	}
	s.measured = 2
	if got := s.remaining(time.Second, 4*time.Second, time.Minute, 500*time.Millisecond); got != 16500*time.Millisecond {
		t.Errorf("2 of 10 passes in 4s: %s left, want 16.5s (8 passes at 2s, and 500ms after)", got)
	}
	if got := s.remaining(time.Second, 4*time.Second, 3*time.Second, 0); got != 3*time.Second {
		t.Errorf("at most the budget left: %s", got)
	}
}
