package workload

import (
	"slices"
	"sync"
	"testing"
)

// TestStencilBlocks: the grid stepped by three participants' blocks gives
// what one participant owning every cell gives, and the boundary cells
// stay fixed.
func TestStencilBlocks(t *testing.T) {
	one, three := NewStencil(1, 12), NewStencil(3, 4)
	for st := 0; st < 7; st++ {
		one.Step(0, st)
		for p := 0; p < 3; p++ {
			three.Step(p, st)
		}
	}
	got, want := three.After(7), one.After(7)
	if !slices.Equal(got, want) {
		t.Fatalf("three blocks %v, one block %v", got, want)
	}
	if got[0] != 1 || got[len(got)-1] != -1 || got[1] == 0 {
		t.Errorf("after 7 steps %v: want the boundary 1 and -1 and the heat spread inward", got)
	}
}

// TestCondBarrierHoldsEpisodes: no participant enters episode e+1 before
// every participant finished episode e.
func TestCondBarrierHoldsEpisodes(t *testing.T) {
	const n, episodes = 4, 200
	b := NewCondBarrier(n)
	var mu sync.Mutex
	done := make([]int, episodes)
	var wg sync.WaitGroup
	for p := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e := range episodes {
				if e > 0 {
					mu.Lock()
					if done[e-1] != n {
						t.Errorf("participant %d in episode %d while episode %d has %d of %d done", p, e, e-1, done[e-1], n)
					}
					mu.Unlock()
				}
				mu.Lock()
				done[e]++
				mu.Unlock()
				b.Wait(p)
			}
		}()
	}
	wg.Wait()
}
