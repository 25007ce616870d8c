//go:build linux && (amd64 || 386)

package hwtree

import (
	"runtime"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/internal/rawcpuid"
)

// liveX86Procs asks each CPU of cpus about itself, from one locked OS
// thread pinned to each CPU in turn (as hwloc binds to each PU). A CPU the
// thread cannot be pinned to is left out. The thread stays locked when the
// goroutine ends, so Go discards it with its affinity.
func liveX86Procs(cpus cpuset.Set) map[int]x86Proc {
	out := map[int]x86Proc{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		q := func(leaf, sub uint32) [4]uint32 {
			a, b, c, d := rawcpuid.CPUID(leaf, sub)
			return [4]uint32{a, b, c, d}
		}
		for _, c := range cpus.Members() {
			if osal.Pin(c) != nil {
				continue
			}
			if p, ok := decodeX86(q); ok {
				out[c] = p
			}
		}
	}()
	<-done
	return out
}
