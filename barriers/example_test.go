package barriers_test

import (
	"fmt"
	"sync"

	"github.com/barriertune/barriertune/barriers"
)

// Four goroutines compute in phases; the barrier keeps each phase from
// reading what the next phase is still writing.
func Example() {
	const n = 4
	b, err := barriers.New("dissemination", n)
	if err != nil {
		panic(err)
	}
	var partial [n]int
	var total [n]int
	var wg sync.WaitGroup
	for id := 0; id < n; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			partial[id] = (id + 1) * 10 // phase 1: write my slot
			b.Wait(id)                  // every slot is now written and visible
			for _, v := range partial { // phase 2: read all slots
				total[id] += v
			}
		}()
	}
	wg.Wait()
	fmt.Println(total)
	// Output: [100 100 100 100]
}

// Pick an algorithm and a waiting policy explicitly. Pure spinning suits
// threads pinned one per CPU; the default, AutoPolicy, always makes progress.
func ExampleNew() {
	b, err := barriers.New("mcs", 8, barriers.WithPolicy(barriers.Park))
	if err != nil {
		panic(err)
	}
	fmt.Println(b.N())
	_, err = barriers.New("fastest", 8)
	fmt.Println(err)
	// Output:
	// 8
	// unknown barrier algorithm "fastest" (accepted: all-static-tree, binomial, butterfly, central, channel, combining, cond, dissemination, hybrid, mcs, pairwise, static-tree, tournament)
}

// The catalog lists every algorithm with its source and cost.
func ExampleAlgorithms() {
	for _, a := range barriers.Algorithms()[:3] {
		fmt.Printf("%s: %s\n", a.Name, a.Cost)
	}
	// Output:
	// central: L + P·o + t_bc(P−1)
	// static-tree: (L + f·o)⌈log_f P⌉ + t_bc(P−1)
	// all-static-tree: 2(L + f·o)⌈log_f P⌉
}

// Auto gives the barrier the install-time check found fastest for n
// participants on this machine (from $BARRIERTUNE_RESULTS or the per-user
// results file), or the documented fallback when there is none.
func ExampleAuto() {
	const n = 2
	b, err := barriers.Auto(n)
	if err != nil {
		panic(err)
	}
	tuning := barriers.Tuned(n) // what was chosen, and why
	_ = tuning.Algorithm
	var wg sync.WaitGroup
	for id := 0; id < n; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for step := 0; step < 3; step++ {
				b.Wait(id)
			}
		}()
	}
	wg.Wait()
	fmt.Println("done")
	// Output: done
}

// Tuning.Team runs the participants pinned on the tuned placement when the
// results hold one for exactly n.
func ExampleTuning_Team() {
	tuning := barriers.Tuned(2)
	b, err := tuning.New()
	if err != nil {
		panic(err)
	}
	team, err := tuning.Team()
	if err != nil {
		panic(err)
	}
	err = team.Run(func(rank int) {
		for step := 0; step < 3; step++ {
			b.Wait(rank)
		}
	})
	fmt.Println(err)
	// Output: <nil>
}
