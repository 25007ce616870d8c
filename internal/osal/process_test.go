package osal

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
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

// allowedChildEnv makes TestAllowedNotWidened's child run: it pins a
// thread to the CPU the variable holds, outside the CPUs it started with,
// and prints Allowed.
const allowedChildEnv = "BARRIERTUNE_TEST_ALLOWED_CHILD"

// TestAllowedNotWidened: a process started on one CPU (taskset) that pins
// one of its threads to another (the kernel allows it within the cpuset)
// still has the one CPU it started with: Allowed is the start set that
// its threads may still run on.
func TestAllowedNotWidened(t *testing.T) {
	if v := os.Getenv(allowedChildEnv); v != "" {
		cpu, _ := strconv.Atoi(v)
		done := make(chan error)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
			done <- Pin(cpu)
			select {}
		}()
		if err := <-done; err != nil {
			t.Skip("pinning outside the start set:", err)
		}
		a, err := Allowed()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("allowed=%s\n", a)
		return
	}
	before, err := Allowed()
	if err != nil || before.Len() < 2 {
		t.Skip("needs two allowed CPUs")
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("no taskset:", err)
	}
	cpus := before.Members()
	cmd := exec.Command(taskset, "-c", strconv.Itoa(cpus[0]), os.Args[0], "-test.run=^TestAllowedNotWidened$", "-test.v")
	cmd.Env = append(os.Environ(), allowedChildEnv+"="+strconv.Itoa(cpus[1]))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Skipf("the child skipped: %s", out)
	}
	if want := fmt.Sprintf("allowed=%d\n", cpus[0]); !strings.Contains(string(out), want) {
		t.Errorf("started on CPU %d, a thread pinned to CPU %d: want %q in %s", cpus[0], cpus[1], want, out)
	}
}
