package main

import (
	"fmt"
	"strings"

	"github.com/barriertune/barriertune/results"
)

// runtimesLost says which runtime decisions old holds that f lacks: an
// OpenMP runtime's count or an MPI implementation's rank count that old
// measured to a decision (a setting chosen, or the defaults measured to
// stay) and f has not (absent, not measured or not decided). It is ""
// when f keeps every one of them. A check interrupted after its rounds
// stops the OpenMP and MPI steps where they are, and its file must not
// replace one whose steps finished (writeCheckResults).
func runtimesLost(f, old *results.File) string {
	if o := old.OpenMP; o != nil {
		for _, r := range o.Runtimes {
			for _, c := range r.Counts {
				if !ompDecided(&c) {
					continue
				}
				if n := f.OpenMP.Runtime(r.Name).Count(c.Threads); n == nil || !ompDecided(n) {
					return fmt.Sprintf("OpenMP %s at %d threads", r.Name, c.Threads)
				}
			}
		}
	}
	if m := old.MPI; m != nil {
		for _, im := range m.Implementations {
			for _, c := range im.Counts {
				if !mpiDecided(&c) {
					continue
				}
				if n := mpiCount(f, im.Name, c.Ranks); n == nil || !mpiDecided(n) {
					return fmt.Sprintf("MPI %s at %d ranks", im.Name, c.Ranks)
				}
			}
		}
	}
	return ""
}

// ompDecided reports whether an OpenMP count was measured to a decision.
func ompDecided(c *results.OpenMPCount) bool {
	return c.NotMeasured == "" && c.NotDecided == "" && c.DefaultNs > 0
}

// mpiDecided reports whether an MPI count was measured to a decision (an
// MPI count too short to decide says so in Why, "not decided: ...").
func mpiDecided(c *results.MPICount) bool {
	return c.NotMeasured == "" && c.DefaultNs > 0 && !strings.HasPrefix(c.Why, "not decided")
}

// mpiCount is f's record of impl at ranks, or nil.
func mpiCount(f *results.File, impl string, ranks int) *results.MPICount {
	if f.MPI == nil {
		return nil
	}
	for i := range f.MPI.Implementations {
		im := &f.MPI.Implementations[i]
		if im.Name != impl {
			continue
		}
		for j := range im.Counts {
			if im.Counts[j].Ranks == ranks {
				return &im.Counts[j]
			}
		}
	}
	return nil
}
