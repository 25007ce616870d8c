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
