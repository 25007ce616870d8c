package cpuset

import (
	"runtime"
	"slices"
	"testing"
)

// Oversubscribed and CPUs against a brute-force count of every placement
// of up to 4 ranks on CPUs 0-2 (and a negative and a large CPU).
func TestPlacementBruteForce(t *testing.T) {
	cpus := []int{0, 1, 2, -1, 70000}
	var walk func(p Placement)
	walk = func(p Placement) {
		repeats := false
		for i := range p {
			for j := range i {
				repeats = repeats || p[i] == p[j]
			}
		}
		if got := p.Oversubscribed(); got != repeats {
			t.Errorf("%v.Oversubscribed() = %v, want %v", p, got, repeats)
		}
		d := p.CPUs()
		for _, c := range p {
			if !slices.Contains(d, c) {
				t.Errorf("%v.CPUs() = %v misses %d", p, d, c)
			}
		}
		if len(d) == len(p) == repeats {
			t.Errorf("%v.CPUs() = %v: %d distinct with repeats %v", p, d, len(d), repeats)
		}
		if len(p) == 4 {
			return
		}
		for _, c := range cpus {
			walk(append(slices.Clone(p), c))
		}
	}
	walk(nil)
}

// Oversubscribed follows GOMAXPROCS and the CPU count; OversubscribedHere
// is the placement's repeats or the process's limit, at every GOMAXPROCS
// from 1 to 3 and team sizes around it.
func TestOversubscribedHere(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for procs := 1; procs <= 3; procs++ {
		runtime.GOMAXPROCS(procs)
		limit := min(procs, runtime.NumCPU())
		for n := 0; n <= limit+2; n++ {
			if got, want := Oversubscribed(n), n > limit; got != want {
				t.Errorf("GOMAXPROCS %d, %d CPUs: Oversubscribed(%d) = %v, want %v", procs, runtime.NumCPU(), n, got, want)
			}
			distinct := make(Placement, n)
			for i := range distinct {
				distinct[i] = i
			}
			if got, want := distinct.OversubscribedHere(), n > limit; got != want {
				t.Errorf("GOMAXPROCS %d: %v.OversubscribedHere() = %v, want %v", procs, distinct, got, want)
			}
			if n >= 2 {
				shared := slices.Clone(distinct)
				shared[n-1] = shared[0]
				if !shared.OversubscribedHere() {
					t.Errorf("GOMAXPROCS %d: %v.OversubscribedHere() = false with a CPU shared", procs, shared)
				}
			}
		}
	}
}
