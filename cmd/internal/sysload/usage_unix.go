//go:build unix

package sysload

import (
	"fmt"
	"syscall"
	"time"
)

// ownCPU is this process's user and system time and its waited-for
// children's.
func ownCPU() (time.Duration, error) {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			return 0, fmt.Errorf("sysload: getrusage: %w", err)
		}
		total += time.Duration(ru.Utime.Nano()) + time.Duration(ru.Stime.Nano())
	}
	return total, nil
}
