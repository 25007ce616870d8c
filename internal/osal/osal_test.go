//go:build linux

package osal

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/barriertune/barriertune/cpuset"
)

func TestTeamPinsAndRestores(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("pinning needs Linux")
	}
	allowed, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	cpus := RoundRobin(2*allowed.Len(), allowed)
	team, err := NewTeam(cpus)
	if err != nil {
		t.Fatal(err)
	}
	if team.Size() != len(cpus) || !team.Pinned() {
		t.Fatalf("team size %d pinned %v", team.Size(), team.Pinned())
	}
	seen := make([]atomic.Int64, len(cpus))
	err = team.Run(func(rank int) {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil {
			t.Error(err)
			return
		}
		if set.Count() != 1 || !set.IsSet(cpus[rank]) {
			t.Errorf("rank %d runs with affinity of %d CPUs, want only CPU %d", rank, set.Count(), cpus[rank])
		}
		seen[rank].Add(1)
	})
	if err != nil {
		t.Fatal(err)
	}
	for r := range seen {
		if seen[r].Load() != 1 {
			t.Errorf("rank %d ran %d times", r, seen[r].Load())
		}
	}
	// Threads return to the pool with their old affinity: a fresh goroutine
	// on any thread sees the whole allowed set.
	for i := 0; i < 8; i++ {
		done := make(chan int)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var set unix.CPUSet
			_ = unix.SchedGetaffinity(0, &set)
			done <- set.Count()
		}()
		if got := <-done; got != allowed.Len() {
			t.Fatalf("a thread kept a pinned affinity: %d CPUs, want %d", got, allowed.Len())
		}
	}
}

func TestTeamErrors(t *testing.T) {
	if _, err := NewTeam(nil); err == nil {
		t.Error("empty team accepted")
	}
	allowed, _ := Allowed()
	_, err := NewTeam([]int{allowed.Members()[0], 4000})
	if err == nil || !strings.Contains(err.Error(), "CPU 4000") || !strings.Contains(err.Error(), allowed.String()) {
		t.Errorf("error %v must name CPU 4000 and the allowed set %s", err, allowed)
	}
	if err := Pin(-1); err == nil || !strings.Contains(err.Error(), "-1") {
		t.Errorf("Pin(-1) = %v", err)
	}
	if _, err := NewUnpinnedTeam(0); err == nil {
		t.Error("team of 0 accepted")
	}
}

func TestUnpinnedTeam(t *testing.T) {
	team, err := NewUnpinnedTeam(16)
	if err != nil {
		t.Fatal(err)
	}
	var sum atomic.Int64
	if err := team.Run(func(rank int) { sum.Add(int64(rank)) }); err != nil {
		t.Fatal(err)
	}
	if sum.Load() != 120 || team.Pinned() {
		t.Errorf("sum of ranks %d, want 120", sum.Load())
	}
}

func TestNanotimeMonotonic(t *testing.T) {
	prev := Nanotime()
	for i := 0; i < 1000; i++ {
		Relax()
		now := Nanotime()
		if now < prev {
			t.Fatalf("clock went back: %d after %d", now, prev)
		}
		prev = now
	}
}

// TestRunDelay: this thread's run delay never falls, and it grows when
// the process runs more busy threads than it has CPUs (each one a locked
// OS thread with a P of its own, spinning until this thread's delay has
// grown or 2 s passed): this thread, spinning too, must then wait for a
// CPU. One busy thread per allowed CPU plus one is the least that forces
// it.
func TestRunDelay(t *testing.T) {
	if testing.Short() {
		t.Skip("spins a thread per CPU for up to 2 s")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	allowed, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	tid, before := RunDelay()
	if before < 0 || tid != ThreadID() {
		t.Fatalf("RunDelay = %d, %d on Linux (thread %d)", tid, before, ThreadID())
	}
	var stop atomic.Bool
	done := make(chan struct{})
	busy := allowed.Len() + 1
	// Enough Ps for every busy thread and this one: else the Go scheduler,
	// not the kernel, would take turns.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(busy + 1))
	for range busy {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for !stop.Load() {
				Relax()
			}
			done <- struct{}{}
		}()
	}
	deadline := Nanotime() + 2e9
	grew := false
	for Nanotime() < deadline && !grew {
		for range 1000 {
			Relax()
		}
		_, d := RunDelay()
		grew = d > before
	}
	stop.Store(true)
	for range busy {
		<-done
	}
	if !grew {
		t.Errorf("%d busy threads on %d allowed CPUs for 2 s: this thread's run delay stayed at %d ns", busy, allowed.Len(), before)
	}
	if _, after := RunDelay(); after < before {
		t.Errorf("run delay fell from %d to %d", before, after)
	}
}

// AtOnce keeps the allowed CPUs a process runs at once: all of them,
// unless GOMAXPROCS (or a CPU quota) is fewer, then that many, the first.
func TestAtOnce(t *testing.T) {
	allowed := cpuset.Of(2, 5, 7, 9)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if got := AtOnce(allowed); !got.Equal(cpuset.Of(2)) {
		t.Errorf("GOMAXPROCS 1: AtOnce(%s) = %s, want 2", allowed, got)
	}
	runtime.GOMAXPROCS(1000)
	k := min(Usable(), 1000)
	want := allowed
	if k < allowed.Len() {
		want = cpuset.Of(allowed.Members()[:k]...)
	}
	if got := AtOnce(allowed); !got.Equal(want) {
		t.Errorf("GOMAXPROCS 1000, %d usable: AtOnce(%s) = %s, want %s", Usable(), allowed, got, want)
	}
	if got := AtOnce(cpuset.Set{}); !got.IsEmpty() {
		t.Errorf("AtOnce(empty) = %s", got)
	}
}
