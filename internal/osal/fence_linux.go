//go:build linux

package osal

import (
	"sync"

	"golang.org/x/sys/unix"
)

// membarrier(2) commands (linux/membarrier.h; x/sys/unix names none).
const (
	membarrierQuery                    = 0
	membarrierPrivateExpedited         = 1 << 3
	membarrierRegisterPrivateExpedited = 1 << 4
)

// heavyFence is the process's registration for membarrier's private
// expedited command, made once (the accepted sync.Once-cached fact).
var heavyFence struct {
	once sync.Once
	ok   bool
}

// HeavyFenceAvailable reports whether HeavyFence works in this process:
// the kernel has membarrier's private expedited command (Linux 4.14 and
// later) and no seccomp filter refuses it. The first call registers the
// process for it; later calls return the cached answer.
func HeavyFenceAvailable() bool {
	heavyFence.once.Do(func() {
		cmds, _, errno := unix.RawSyscall(unix.SYS_MEMBARRIER, membarrierQuery, 0, 0)
		if errno != 0 || cmds&membarrierPrivateExpedited == 0 {
			return
		}
		if _, _, errno := unix.RawSyscall(unix.SYS_MEMBARRIER, membarrierRegisterPrivateExpedited, 0, 0); errno != 0 {
			return
		}
		heavyFence.ok = true
	})
	return heavyFence.ok
}

// HeavyFence is the heavy side of an asymmetric fence: when it returns,
// every thread of this process that was running has executed a full
// memory barrier (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED): the
// kernel interrupts the CPUs that run them), and a thread that was not
// running passed one when it was switched out. A thread whose light side
// is a plain store followed by a plain load (no fence: x86 lets the load
// pass the store) then cannot miss the caller's store made before the
// call, unless the caller's load after the call sees its store. It costs
// an interrupt per such CPU (microseconds): keep it off fast paths. It
// reports false, and fences nothing, where HeavyFenceAvailable is false.
func HeavyFence() bool {
	if !HeavyFenceAvailable() {
		return false
	}
	_, _, errno := unix.Syscall(unix.SYS_MEMBARRIER, membarrierPrivateExpedited, 0, 0)
	return errno == 0
}
