package osal_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/internal/osal"
)

// teams returns an unpinned team of n and, where pinning works, a pinned
// one (participants share CPUs when there are fewer CPUs than n).
func teams(t *testing.T, n int) map[string]*osal.Team {
	out := map[string]*osal.Team{}
	u, err := osal.NewUnpinnedTeam(n)
	if err != nil {
		t.Fatal(err)
	}
	out["unpinned"] = u
	if allowed, err := osal.Allowed(); err == nil {
		if p, err := osal.NewTeam(osal.RoundRobin(n, allowed)); err == nil {
			if err := p.Run(func(int) {}); err == nil {
				out["pinned"] = p
			}
		}
	}
	return out
}

// runWithin runs f and fails the test if it has not returned after a
// generous deadline (a hang detector, not a speed bound).
func runWithin(t *testing.T, f func() error) error {
	t.Helper()
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	select {
	case err := <-ch:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return: participants hang")
		return nil
	}
}

func TestRunReturnsPanic(t *testing.T) {
	for name, team := range teams(t, 3) {
		t.Run(name, func(t *testing.T) {
			err := team.Run(func(rank int) {
				if rank == 1 {
					panic("boom")
				}
			})
			if err == nil || !strings.Contains(err.Error(), "participant 1 panicked: boom") || !strings.Contains(err.Error(), "team_test.go") {
				t.Fatalf("Run = %v, want participant 1's panic with its stack", err)
			}
			sentinel := errors.New("typed")
			err = team.Run(func(rank int) {
				if rank == 2 {
					panic(sentinel)
				}
			})
			if !errors.Is(err, sentinel) {
				t.Fatalf("Run = %v, want an error wrapping the panicked error", err)
			}
		})
	}
}

func TestRunBarrierBreaksOnPanic(t *testing.T) {
	const n = 3
	for name, team := range teams(t, n) {
		for _, alg := range []string{"dissemination", "central", "cond", "channel", "mcs"} {
			t.Run(fmt.Sprintf("%s/%s", name, alg), func(t *testing.T) {
				b, err := barriers.New(alg, n)
				if err != nil {
					t.Fatal(err)
				}
				err = runWithin(t, func() error {
					return team.RunBarrier(b, func(rank int) {
						for e := 0; e < 50; e++ {
							if rank == 0 && e == 20 {
								panic("participant failure")
							}
							b.Wait(rank)
						}
					})
				})
				if err == nil || !strings.Contains(err.Error(), "participant 0 panicked: participant failure") {
					t.Fatalf("RunBarrier = %v, want participant 0's panic", err)
				}
				if !errors.Is(err, barriers.ErrBroken) {
					t.Errorf("RunBarrier = %v, want the others' ErrBroken too", err)
				}
			})
		}
	}
}

func TestRunBarrierDetectsEarlyReturn(t *testing.T) {
	const n = 3
	for name, team := range teams(t, n) {
		for _, alg := range []string{"dissemination", "tournament", "cond", "channel"} {
			t.Run(fmt.Sprintf("%s/%s", name, alg), func(t *testing.T) {
				b, err := barriers.New(alg, n)
				if err != nil {
					t.Fatal(err)
				}
				err = runWithin(t, func() error {
					return team.RunBarrier(b, func(rank int) {
						for e := 0; e < 30; e++ {
							if rank == 2 && e == 10 {
								return // forgets the remaining episodes
							}
							b.Wait(rank)
						}
					})
				})
				if err == nil || !strings.Contains(err.Error(), "participant 2 returned after 10 episodes") {
					t.Fatalf("RunBarrier = %v, want participant 2's early return detected", err)
				}
				// The barrier is repaired by Reset and runs clean.
				b.Reset()
				err = runWithin(t, func() error {
					return team.RunBarrier(b, func(rank int) {
						for e := 0; e < 30; e++ {
							b.Wait(rank)
						}
					})
				})
				if err != nil {
					t.Fatalf("after Reset, RunBarrier = %v", err)
				}
			})
		}
	}
}
