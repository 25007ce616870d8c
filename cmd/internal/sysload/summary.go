package sysload

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Thresholds of Busy.
const (
	// BusyOthers: the machine is busy when, in the median reading, at
	// least this many runnable tasks were not this process's.
	BusyOthers = 1
)

// Summary is what a Watch saw.
type Summary struct {
	// Readings is how many readings it took over Duration.
	Readings int
	Duration time.Duration
	// OthersMedian is the median over the readings of the runnable tasks
	// that were not the process's; OthersMax the most in one reading.
	OthersMedian float64
	OthersMax    int
	// DelayShare is the run delay the process's threads gained over the
	// watch, summed over its threads, over the wall time: 0.5 is half a
	// CPU's worth of waiting for CPUs. Only the intervals between two
	// readings that each saw no more of the process's threads runnable
	// than it may use CPUs count (the reader's own thread aside): more
	// of them than CPUs wait for one another, whatever else runs (a
	// check measures 8 threads on 2 CPUs on purpose).
	DelayShare float64
	// Load1Start and Load1End are the one-minute load average at the
	// first and the last reading.
	Load1Start, Load1End float64
	// OthersCPU is the CPU time other processes used on the CPUs read
	// (Proc.OnlyCPUs) between the first and the last reading with a
	// Usage, as a share of one CPU (OthersShare), and OthersCPUBound the
	// share from which that is busy (BusyBound); CPUKnown says they were
	// read.
	OthersCPU, OthersCPUBound float64
	CPUKnown                  bool
}

// Summarise sums up readings, oldest first, of a process that may use
// cpus CPUs. A thread's run delay counts from its first reading to its
// last (a thread that came or went between two readings adds what the
// readings saw of it), over the intervals whose two readings each saw at
// most cpus of its threads runnable besides the reader's.
func Summarise(rs []Reading, cpus int) Summary {
	var s Summary
	if len(rs) == 0 {
		return s
	}
	s.Readings = len(rs)
	first, last := rs[0], rs[len(rs)-1]
	s.Duration = last.When.Sub(first.When)
	s.Load1Start, s.Load1End = first.Load1, last.Load1
	others := make([]float64, len(rs))
	for i, r := range rs {
		others[i] = float64(r.Others())
		s.OthersMax = max(s.OthersMax, r.Others())
	}
	s.OthersMedian = median(others)
	var u0, u1 *Reading
	for i := range rs {
		if rs[i].HasUsage {
			if u0 == nil {
				u0 = &rs[i]
			}
			u1 = &rs[i]
		}
	}
	if u0 != nil && u1.Usage.When.After(u0.Usage.When) {
		s.OthersCPU, s.OthersCPUBound, s.CPUKnown = OthersShare(u0.Usage, u1.Usage), BusyBound(u0.Usage, u1.Usage), true
	}
	var delay, counted int64
	for i := 1; i < len(rs); i++ {
		if rs[i-1].Own-1 > cpus || rs[i].Own-1 > cpus {
			continue
		}
		counted += int64(rs[i].When.Sub(rs[i-1].When))
		for tid, d := range rs[i].Delay {
			if prev, ok := rs[i-1].Delay[tid]; ok && d >= prev {
				delay += d - prev
			}
		}
	}
	if counted > 0 {
		s.DelayShare = float64(delay) / float64(counted)
	}
	return s
}

// Busy reports whether the machine was busy, and why in words. Where the
// CPU times were read (CPUKnown): other processes used BusyOthersShare of
// a CPU or more of the CPUs read (beyond the ticks' rounding,
// OthersCPUBound), which they took from the process or would have; load
// on CPUs the process may not use does not count. Else: in the median
// reading another process's task was runnable (BusyOthers), anywhere on
// the machine. The process's own run delay is said beside it, but decides
// nothing: a process that keeps every CPU busy itself (a check's pinned
// spinning threads, its timer and reader threads beside them) makes its
// threads wait for one another, half a CPU's time on a quiet 2-CPU
// machine. Fewer than two readings say nothing.
func (s Summary) Busy() (bool, string) {
	if s.Readings < 2 {
		return false, ""
	}
	var why string
	if s.CPUKnown {
		if s.OthersCPU < s.OthersCPUBound {
			return false, ""
		}
		why = fmt.Sprintf("other processes used %.0f%% of a CPU of the CPUs it may use (under %.0f%% is quiet; %s runnable tasks of other processes in the median reading, at most %d)",
			100*s.OthersCPU, 100*s.OthersCPUBound, strconv.FormatFloat(s.OthersMedian, 'f', -1, 64), s.OthersMax)
	} else {
		if s.OthersMedian < BusyOthers {
			return false, ""
		}
		why = fmt.Sprintf("%s runnable tasks of other processes in the median reading (at most %d)", strconv.FormatFloat(s.OthersMedian, 'f', -1, 64), s.OthersMax)
	}
	if s.DelayShare > 0 {
		why += fmt.Sprintf("; its threads waited for a CPU %.0f%% of the time", 100*s.DelayShare)
	}
	return true, why
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
