package osal_test

import (
	"fmt"
	"strings"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/hwtree/cpuset"
	"github.com/barriertune/barriertune/osal"
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
