package barriers_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/results"
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
	// unknown barrier algorithm "fastest" (accepted: all-static-tree, binomial, butterfly, central, channel, combining, cond, dissemination, goroutine, hybrid, mcs, pairwise, static-tree, tournament)
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
	// The output does not depend on the machine: Auto builds a barrier for
	// n whichever file the lookup order finds (a missing file named by
	// $BARRIERTUNE_RESULTS is skipped), or the fallback when none applies.
	old, had := os.LookupEnv(results.ResultsEnv)
	os.Setenv(results.ResultsEnv, "no-such-results-file.json")
	defer func() {
		if had {
			os.Setenv(results.ResultsEnv, old)
		} else {
			os.Unsetenv(results.ResultsEnv)
		}
	}()
	const n = 2
	b, err := barriers.Auto(n)
	if err != nil {
		panic(err)
	}
	tuning := barriers.Tuned(n) // what was chosen, and why (Source, Rule, Fallback)
	fmt.Println(tuning.Threads) // the participants it was chosen for
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
	// Output:
	// 2
	// done
}

// Tuning.Team runs the participants pinned on the tuned placement when the
// results hold one for exactly n.
func ExampleTuning_Team() {
	tuning := barriers.TunedFrom("no-such-results-file.json", 2) // the fallback: an unpinned team
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

// WaitContext ends early when its context does: the caller whose context
// ended gets ctx.Err(), the barrier breaks, and everyone else gets an
// error wrapping ErrBroken. Reset repairs the barrier once nobody waits.
func ExampleBarrier_waitContext() {
	b, err := barriers.New("central", 3)
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	errs := make(chan error, 2)
	go func() { errs <- b.WaitContext(ctx, 0) }()                  // gives up after 10ms
	go func() { errs <- b.WaitContext(context.Background(), 1) }() // participant 2 never comes
	e1, e2 := <-errs, <-errs
	fmt.Println(errors.Is(e1, context.DeadlineExceeded) != errors.Is(e2, context.DeadlineExceeded))
	fmt.Println(errors.Is(e1, barriers.ErrBroken) || errors.Is(e2, barriers.ErrBroken))

	b.Reset()
	var wg sync.WaitGroup
	for id := 0; id < 3; id++ {
		wg.Add(1)
		go func() { defer wg.Done(); b.Wait(id) }()
	}
	wg.Wait()
	fmt.Println("usable again")
	// Output:
	// true
	// true
	// usable again
}

// Break releases every waiter; a plain Wait on a broken barrier panics
// with an error wrapping ErrBroken.
func ExampleBarrier_break() {
	b, err := barriers.New("dissemination", 2)
	if err != nil {
		panic(err)
	}
	done := make(chan error)
	go func() { done <- b.WaitContext(context.Background(), 0) }()
	b.Break()
	fmt.Println(errors.Is(<-done, barriers.ErrBroken))
	defer func() {
		err, _ := recover().(error)
		fmt.Println(errors.Is(err, barriers.ErrBroken))
	}()
	b.Wait(1)
	// Output:
	// true
	// true
}

// Algorithms lists the catalog; Lookup describes one algorithm.
func ExampleLookup() {
	fmt.Println(len(barriers.Algorithms()))
	a, err := barriers.Lookup("dissemination")
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Name, a.Cost, a.Spins)
	// Output:
	// 14
	// dissemination (L + 2o)⌈log₂ P⌉ true
}

// ParsePolicy reads the names Policy.String writes.
func ExampleParsePolicy() {
	p, err := barriers.ParsePolicy("park")
	fmt.Println(p, err)
	_, err = barriers.ParsePolicy("busy")
	fmt.Println(err)
	// Output:
	// park <nil>
	// unknown waiting policy "busy" (accepted: auto, spin, yield, park)
}

// WithFanIn and WithSpinBudget tune the tree shape and how long Yield and
// Park spin before giving the CPU up.
func ExampleWithFanIn() {
	b, err := barriers.New("combining", 16, barriers.WithFanIn(2), barriers.WithPolicy(barriers.Yield), barriers.WithSpinBudget(128))
	fmt.Println(b.N(), err)
	_, err = barriers.New("combining", 16, barriers.WithFanIn(1))
	fmt.Println(err)
	// Output:
	// 16 <nil>
	// fan-in 1 is too small (want 2 or more)
}

// WithPolicy picks how waiters wait; Spin suits threads pinned one per CPU.
func ExampleWithPolicy() {
	for _, p := range []barriers.Policy{barriers.AutoPolicy, barriers.Spin, barriers.Yield, barriers.Park} {
		b, err := barriers.New("tournament", 2, barriers.WithPolicy(p), barriers.WithSpinBudget(32))
		fmt.Println(p, b.N(), err)
	}
	// Output:
	// auto 2 <nil>
	// spin 2 <nil>
	// yield 2 <nil>
	// park 2 <nil>
}

// WithSpinBudget sets how long Yield and Park spin before they yield or
// block; a negative budget keeps the default.
func ExampleWithSpinBudget() {
	b, err := barriers.New("dissemination", 4, barriers.WithPolicy(barriers.Park), barriers.WithSpinBudget(0))
	fmt.Println(b.N(), err) // parks at once: good when participants share CPUs
	// Output: 4 <nil>
}

// String gives the names ParsePolicy accepts.
func ExamplePolicy_String() {
	fmt.Println(barriers.AutoPolicy, barriers.Spin, barriers.Yield, barriers.Park, barriers.Policy(9))
	// Output: auto spin yield park Policy(9)
}
