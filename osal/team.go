package osal

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/barriertune/barriertune/hwtree/cpuset"
)

// Team runs one function on n participants at once. A pinned team gives each
// participant its own locked OS thread bound to one CPU; an unpinned team
// uses plain goroutines, which the Go scheduler switches in user space (the
// right choice when participants outnumber the CPUs).
type Team struct {
	cpus []int // nil for an unpinned team
	n    int
}

// NewTeam returns a team whose participant i runs on a locked OS thread
// pinned to cpus[i]. Several participants may share a CPU. Every CPU must be
// in the allowed set; the error names the CPU and that set.
func NewTeam(cpus []int) (*Team, error) {
	if len(cpus) == 0 {
		return nil, errors.New("a team needs at least one CPU")
	}
	allowed, err := Allowed()
	if err != nil {
		return nil, err
	}
	for _, c := range cpus {
		if !allowed.Has(c) {
			return nil, fmt.Errorf("CPU %d is not allowed for this process (allowed CPUs: %s)", c, allowed)
		}
	}
	return &Team{cpus: append([]int(nil), cpus...), n: len(cpus)}, nil
}

// NewUnpinnedTeam returns a team of n plain goroutines.
func NewUnpinnedTeam(n int) (*Team, error) {
	if n < 1 {
		return nil, fmt.Errorf("a team needs at least one participant, got %d", n)
	}
	return &Team{n: n}, nil
}

// Size returns the number of participants.
func (t *Team) Size() int { return t.n }

// CPUs returns the CPUs participants are pinned to, or nil when unpinned.
func (t *Team) CPUs() []int { return append([]int(nil), t.cpus...) }

// Pinned reports whether participants run on pinned locked threads.
func (t *Team) Pinned() bool { return t.cpus != nil }

// Run calls fn(rank) on every participant at once and returns when all have
// returned. In a pinned team every participant is locked and pinned before
// any of them starts fn; if one cannot be pinned, none runs fn and the error
// says why. Afterwards each thread gets its former affinity back and is
// unlocked, so no thread stays pinned or locked.
func (t *Team) Run(fn func(rank int)) error {
	if t.cpus == nil {
		var wg sync.WaitGroup
		for r := 0; r < t.n; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fn(r)
			}()
		}
		wg.Wait()
		return nil
	}
	var ready, done sync.WaitGroup
	start := make(chan bool)
	errs := make([]error, t.n)
	for r := 0; r < t.n; r++ {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			saved, err := threadAffinity()
			if err == nil {
				err = Pin(t.cpus[r])
			}
			errs[r] = err
			ready.Done()
			if err != nil {
				<-start
				return
			}
			defer func() {
				if err := restoreAffinity(saved); err != nil {
					// The thread cannot be unpinned: keep it locked so the
					// runtime discards it when the goroutine exits.
					runtime.LockOSThread()
				}
			}()
			if ok := <-start; ok {
				fn(r)
			}
		}()
	}
	ready.Wait()
	err := errors.Join(errs...)
	if err != nil {
		close(start) // receivers see false: nobody runs fn
	} else {
		for i := 0; i < t.n; i++ {
			start <- true
		}
	}
	done.Wait()
	return err
}

// RoundRobin returns n CPUs taken in turn from allowed (in increasing
// order): the default placement when none is given.
func RoundRobin(n int, allowed cpuset.Set) []int {
	m := allowed.Members()
	out := make([]int, n)
	for i := range out {
		out[i] = m[i%len(m)]
	}
	return out
}
