package osal_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/osal"
)

// RoundRobin places n participants over the allowed CPUs in turn.
func ExampleRoundRobin() {
	fmt.Println(osal.RoundRobin(5, cpuset.Range(0, 2)))
	// Output: [0 1 2 0 1]
}

// A team runs one function per participant; RunBarrier breaks the
// participants' barrier when one of them panics, and returns the panic as
// an error instead of crashing or hanging.
func ExampleTeam_RunBarrier() {
	team, err := osal.NewUnpinnedTeam(3)
	if err != nil {
		panic(err)
	}
	b, err := barriers.New("dissemination", team.Size())
	if err != nil {
		panic(err)
	}
	err = team.RunBarrier(b, func(rank int) {
		for step := 0; step < 10; step++ {
			if rank == 2 && step == 5 {
				panic("participant 2 fails")
			}
			b.Wait(rank)
		}
	})
	fmt.Println(strings.Contains(err.Error(), "participant 2 panicked: participant 2 fails"))
	// Output: true
}

// Run without a barrier: each participant gets its rank.
func ExampleTeam_Run() {
	team, err := osal.NewUnpinnedTeam(4)
	if err != nil {
		panic(err)
	}
	squares := make([]int, team.Size())
	err = team.Run(func(rank int) { squares[rank] = rank * rank })
	fmt.Println(squares, err, team.Pinned())
	// Output: [0 1 4 9] <nil> false
}

// NewTeam pins participant i to cpus[i] (Linux); elsewhere running it
// fails with an error wrapping errors.ErrUnsupported.
func ExampleNewTeam() {
	allowed, err := osal.Allowed()
	if err != nil {
		panic(err)
	}
	team, err := osal.NewTeam(osal.RoundRobin(2, allowed))
	if err != nil {
		panic(err)
	}
	_ = team.Run(func(rank int) { osal.Relax() })
}

// An unpinned team runs plain goroutines: the choice when participants
// outnumber the CPUs.
func ExampleNewUnpinnedTeam() {
	team, err := osal.NewUnpinnedTeam(16)
	fmt.Println(team.Size(), team.Pinned(), team.CPUs(), err)
	_, err = osal.NewUnpinnedTeam(0)
	fmt.Println(err)
	// Output:
	// 16 false [] <nil>
	// a team needs at least one participant, got 0
}

// Relax is the CPU's spin-wait hint (PAUSE on amd64, ISB on arm64): call
// it in every iteration of a busy-wait loop.
func ExampleRelax() {
	var ready atomic.Bool
	go ready.Store(true)
	for !ready.Load() {
		osal.Relax()
	}
	fmt.Println("ready")
	// Output: ready
}

// Nanotime is a monotonic clock in nanoseconds for timing short intervals.
func ExampleNanotime() {
	t0 := osal.Nanotime()
	elapsed := osal.Nanotime() - t0
	fmt.Println(elapsed >= 0)
	// Output: true
}

// Allowed is the set of CPUs this process may run on, and Pin binds the
// calling (locked) thread to one of them; off Linux Pin returns an error
// wrapping errors.ErrUnsupported.
func ExamplePin() {
	allowed, err := osal.Allowed()
	if err != nil {
		panic(err)
	}
	done := make(chan error)
	go func() {
		// Never unlocked: when this goroutine exits the runtime discards
		// the pinned thread instead of reusing it (Team restores it).
		runtime.LockOSThread()
		done <- osal.Pin(allowed.Members()[0])
	}()
	if err := <-done; errors.Is(err, errors.ErrUnsupported) {
		fmt.Println("pinning is not available here")
	}
}

// Allowed is the set of CPUs this process may run on (on Linux, the CPUs
// it started with that its threads may still run on, whichever thread
// asks; every CPU elsewhere).
func ExampleAllowed() {
	allowed, err := osal.Allowed()
	if err != nil {
		panic(err)
	}
	fmt.Println("at least one CPU:", allowed.Len() >= 1)
	// Output: at least one CPU: true
}
