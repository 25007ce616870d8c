//go:build linux

package osal

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/barriertune/barriertune/cpuset"
)

// Allowed returns the CPUs this process may run on (sched_getaffinity),
// which a container's cpuset restricts.
func Allowed() (cpuset.Set, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return cpuset.Set{}, fmt.Errorf("sched_getaffinity: %w", err)
	}
	return fromUnix(&set), nil
}

func fromUnix(set *unix.CPUSet) cpuset.Set {
	var cpus []int
	for i := 0; i < len(set)*64; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpuset.Of(cpus...)
}

// threadAffinity returns the calling thread's affinity.
func threadAffinity() (unix.CPUSet, error) {
	var set unix.CPUSet
	err := unix.SchedGetaffinity(0, &set)
	return set, err
}

// Pin binds the calling OS thread to cpu. The caller must have called
// runtime.LockOSThread, or the goroutine may move to another thread and the
// pin would bind whatever goroutine runs there next.
func Pin(cpu int) error {
	if cpu < 0 || cpu >= 1024 {
		return fmt.Errorf("pin to CPU %d: not a CPU number (0..1023)", cpu)
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		allowed, _ := Allowed()
		return fmt.Errorf("pin to CPU %d: %w (allowed CPUs: %s)", cpu, err, allowed)
	}
	return nil
}

// restoreAffinity gives the calling thread back a saved affinity.
func restoreAffinity(set unix.CPUSet) error {
	return unix.SchedSetaffinity(0, &set)
}

// ThreadID returns the calling OS thread's id (gettid), or 0 where the
// system has none to give. Two goroutines that get the same id ran on the
// same OS thread: AutoPolicy uses it to tell a partner that ran on the
// waiter's own thread (then spinning only delays it) from one that ran
// elsewhere. It is a system call: keep it off fast paths.
func ThreadID() int { return unix.Gettid() }

// ThreadPinned reports whether the calling OS thread may run on one CPU
// only (its affinity names one CPU), as a pinned team's locked threads
// do: such a thread that blocks sleeps in the kernel until it is woken,
// and no other thread can run its goroutine. It is a system call: keep it
// off fast paths.
func ThreadPinned() bool {
	var set unix.CPUSet
	return unix.SchedGetaffinity(0, &set) == nil && set.Count() == 1
}

// InvoluntarySwitches returns how many times the kernel has taken a CPU
// from this process's threads while they could still run (getrusage's
// ru_nivcsw over all threads): preemption by other runnable threads, or
// a CPU quota's throttling, and the process's own threads preempting
// each other (the Go runtime wakes idle threads for goroutines made
// runnable, and a woken thread can take its waker's CPU). AutoPolicy
// reads it as evidence that spinning is futile (a partner is likely
// waiting for a CPU). It returns -1 when the system does not say. It is
// a system call: keep it off fast paths.
func InvoluntarySwitches() int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return int64(ru.Nivcsw)
}
