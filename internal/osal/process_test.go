package osal

import (
	"runtime"
	"slices"
	"testing"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/cgroup"
)

// TestUsableWithin: the count is the start affinity's, narrowed by the
// cgroup's cpuset and its CPU quota, and at least 1.
func TestUsableWithin(t *testing.T) {
	for _, c := range []struct {
		name   string
		numCPU int
		l      cgroup.Limits
		want   int
	}{
		{"no cgroup", 8, cgroup.Limits{}, 8},
		{"cpuset", 8, cgroup.Limits{CPUs: cpuset.Of(0, 1, 2, 6)}, 4},
		{"quota", 8, cgroup.Limits{Quota: 2}, 2},
		{"cpuset and quota", 8, cgroup.Limits{CPUs: cpuset.Of(0, 1, 2, 3, 4, 5), Quota: 3}, 3},
		{"affinity narrower", 2, cgroup.Limits{CPUs: cpuset.Of(0, 1, 2, 3, 4, 5), Quota: 3}, 2},
		{"nothing known", 0, cgroup.Limits{}, 1},
	} {
		if got := usableWithin(c.numCPU, c.l); got != c.want {
			t.Errorf("%s: usableWithin(%d, %+v) = %d, want %d", c.name, c.numCPU, c.l, got, c.want)
		}
	}
}

// TestUsableWithinNumCPU: the process's count is never above the CPUs the
// runtime saw at start, nor below 1.
func TestUsableWithinNumCPU(t *testing.T) {
	if u := Usable(); u < 1 || u > runtime.NumCPU() {
		t.Fatalf("Usable() = %d, want 1..%d (runtime.NumCPU)", u, runtime.NumCPU())
	}
}

// Oversubscribed follows GOMAXPROCS and the CPU count; OversubscribedHere
// is the placement's repeats or the process's limit, at every GOMAXPROCS
// from 1 to 3 and team sizes around it.
func TestOversubscribedHere(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for procs := 1; procs <= 3; procs++ {
		runtime.GOMAXPROCS(procs)
		limit := min(procs, Usable())
		for n := 0; n <= limit+2; n++ {
			if got, want := Oversubscribed(n), n > limit; got != want {
				t.Errorf("GOMAXPROCS %d, %d usable CPUs: Oversubscribed(%d) = %v, want %v", procs, Usable(), n, got, want)
			}
			distinct := make(cpuset.Placement, n)
			for i := range distinct {
				distinct[i] = i
			}
			if got, want := OversubscribedHere(distinct), n > limit; got != want {
				t.Errorf("GOMAXPROCS %d: OversubscribedHere(%v) = %v, want %v", procs, distinct, got, want)
			}
			if n >= 2 {
				shared := slices.Clone(distinct)
				shared[n-1] = shared[0]
				if !OversubscribedHere(shared) {
					t.Errorf("GOMAXPROCS %d: OversubscribedHere(%v) = false with a CPU shared", procs, shared)
				}
			}
		}
	}
}

// TestAllowedIsTheProcesses: a thread pinned to one CPU does not narrow
// Allowed, read from it or from another goroutine: it is the process's
// set (its threads' affinities), not the calling thread's.
func TestAllowedIsTheProcesses(t *testing.T) {
	before, err := Allowed()
	if err != nil {
		t.Skip(err)
	}
	if before.Len() < 2 {
		t.Skip("needs two allowed CPUs")
	}
	done := make(chan struct{})
	pinned := make(chan cpuset.Set)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		if err := Pin(before.First()); err != nil {
			t.Error(err)
			close(pinned)
			return
		}
		if !ThreadPinned() {
			t.Error("the thread is not pinned")
		}
		a, err := Allowed()
		if err != nil {
			t.Error(err)
		}
		pinned <- a
		<-done
	}()
	fromPinned := <-pinned
	fromOther, err := Allowed()
	close(done)
	if err != nil {
		t.Fatal(err)
	}
	if !fromPinned.Equal(before) || !fromOther.Equal(before) {
		t.Errorf("Allowed: %s before, %s from a thread pinned to CPU %d, %s from another beside it", before, fromPinned, before.First(), fromOther)
	}
}
