//go:build !linux

package osal

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/barriertune/barriertune/cpuset"
)

// Allowed returns every CPU: this system has no affinity interface here.
func Allowed() (cpuset.Set, error) { return cpuset.Range(0, runtime.NumCPU()-1), nil }

// Pin is unsupported outside Linux: the error wraps errors.ErrUnsupported.
// Barriers still work there (unpinned, with the default policy).
func Pin(cpu int) error {
	return fmt.Errorf("pin to CPU %d: thread pinning needs Linux: %w", cpu, errors.ErrUnsupported)
}

type savedAffinity struct{}

func threadAffinity() (savedAffinity, error) { return savedAffinity{}, nil }
func restoreAffinity(savedAffinity) error    { return nil }

// ThreadID returns 0 outside Linux: the thread's id is not known here (see
// the Linux version).
func ThreadID() int { return 0 }

// ThreadPinned reports false outside Linux: threads are not pinned here
// (see the Linux version).
func ThreadPinned() bool { return false }

// RunDelay returns 0 and -1: the system does not say.
func RunDelay() (tid int, ns int64) { return 0, -1 }

// Crowded returns zeros: the system does not say (see the Linux version).
func Crowded() (runnable, online int) { return 0, 0 }

// HeavyFenceAvailable reports false outside Linux: no membarrier (see the
// Linux version); callers fence on the light side instead.
func HeavyFenceAvailable() bool { return false }

// HeavyFence fences nothing outside Linux and reports false (see the
// Linux version).
func HeavyFence() bool { return false }
