package check

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
)

// A live check runs every count above the CPUs on OS threads of their own
// (the OS-thread pass, osthreads.go), and a count at or below them on
// pinned OS threads: n participants hold n OS threads at once. The Go
// runtime crashes a program that exceeds its thread limit
// (runtime/debug.SetMaxThreads, 10,000 by default: "fatal error: thread
// exhaustion", with a dump of every goroutine), and each participant
// costs memory. Hostable says, before any work, the largest count this
// process can run.

// ThreadMemory is the memory a participant is reckoned to cost: measured
// on the 2-vCPU EPYC guest, 4,000 locked OS threads took 18 KiB each of
// the process's resident memory (the runtime's M and g0 stack, the
// goroutine's stack), and the kernel adds its own task and stack (about
// 30 KiB); the barriers' per-participant state of every candidate instance
// comes on top. 128 KiB is that sum with room for the state.
const ThreadMemory = 128 << 10

// threadMargin is what the thread limit keeps for the runtime's own
// threads (sysmon, GC workers, threads blocked in system calls), the
// check's other goroutines and the control thread: GOMAXPROCS twice and a
// fixed 64.
func threadMargin() int { return 2*runtime.GOMAXPROCS(0) + 64 }

// Hostable is the largest thread count a live check can run in this
// process, and why it is not larger.
type Hostable struct {
	// Max is the largest count (at least 1).
	Max int
	// ByThreads is the count the Go runtime's thread limit allows: the
	// limit less the threads the process has made and a margin.
	ByThreads int
	// ByMemory is the count half the available memory allows at
	// ThreadMemory a participant; 0 when the memory is not known.
	ByMemory int
	// ThreadLimit is the runtime's thread limit (SetMaxThreads).
	ThreadLimit int
	// AvailableBytes is MemAvailable of /proc/meminfo; 0 when unknown.
	AvailableBytes uint64
}

// HostableThreads reads the runtime's thread limit, the threads made so
// far and the memory available now.
func HostableThreads() Hostable {
	limit := debug.SetMaxThreads(1 << 30) // read it: the call returns the old limit,
	debug.SetMaxThreads(limit)            // a larger one in between cannot fail
	made := pprof.Lookup("threadcreate").Count()
	h := Hostable{ThreadLimit: limit, ByThreads: max(limit-made-threadMargin(), 1)}
	h.Max = h.ByThreads
	if avail := memAvailable(); avail > 0 {
		h.AvailableBytes = avail
		h.ByMemory = max(int(avail/2/ThreadMemory), 1)
		h.Max = min(h.Max, h.ByMemory)
	}
	return h
}

// Refuse returns nil when count fits, else an error naming the count, why
// it does not fit and the largest count that does.
func (h Hostable) Refuse(count int) error {
	if count <= h.Max {
		return nil
	}
	if h.ByMemory > 0 && h.ByMemory < h.ByThreads {
		return fmt.Errorf("%d threads need about %d MiB (%d KiB each) and half the available memory is %d MiB: at most %d threads here",
			count, uint64(count)*ThreadMemory>>20, ThreadMemory>>10, h.AvailableBytes/2>>20, h.Max)
	}
	return fmt.Errorf("%d threads exceed what the Go runtime hosts (its limit of %d OS threads, less those it made and a margin of %d): at most %d threads here",
		count, h.ThreadLimit, threadMargin(), h.Max)
}

// memAvailable is /proc/meminfo's MemAvailable in bytes, 0 when unknown.
func memAvailable() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
