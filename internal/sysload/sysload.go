// Package sysload tells how busy the machine is while something runs: the
// time this process's threads spent runnable but waiting for a CPU (their
// run delay, /proc/self/task/*/schedstat), how many runnable tasks on the
// machine are not this process's (/proc/stat's procs_running less this
// process's threads in state R) and the load average (/proc/loadavg).
//
// A Watch reads them every so often while a measurement runs and sums
// them up; Summary.Busy says whether the machine was busy. Timings taken
// on a busy machine measure the competition as much as the code: a
// barrier whose participant waits for a CPU costs a time slice.
package sysload

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Thresholds of Busy.
const (
	// BusyOthers: the machine is busy when, in the median reading, at
	// least this many runnable tasks were not this process's.
	BusyOthers = 1
)

// Proc reads the proc filesystem mounted at Root ("/proc" when empty).
type Proc struct {
	Root string
	// Self is the process whose threads count as its own ("self" when
	// empty).
	Self string
	// CPUs is how many CPUs the process may use (runtime.NumCPU() when
	// 0): its threads' run delay counts only while no more of them were
	// runnable (see Summarise).
	CPUs int
}

func (p Proc) cpus() int {
	if p.CPUs > 0 {
		return p.CPUs
	}
	return runtime.NumCPU()
}

func (p Proc) path(parts ...string) string {
	root := p.Root
	if root == "" {
		root = "/proc"
	}
	return filepath.Join(append([]string{root}, parts...)...)
}

func (p Proc) self() string {
	if p.Self == "" {
		return "self"
	}
	return p.Self
}

// Reading is one look at the machine.
type Reading struct {
	When time.Time
	// Delay is the run delay in ns of each of the process's threads, by
	// thread id (threads whose schedstat could not be read are absent).
	Delay map[int]int64
	// Own is how many of the process's threads were runnable (state R).
	Own int
	// Running is procs_running: runnable tasks on the whole machine.
	Running int
	// Load1 is the one-minute load average.
	Load1 float64
}

// Others is how many runnable tasks were not the process's own.
func (r Reading) Others() int { return max(r.Running-r.Own, 0) }

// Read takes one reading. It fails where the system has no proc
// filesystem (or not these files).
func (p Proc) Read() (Reading, error) {
	r := Reading{When: time.Now(), Delay: map[int]int64{}}
	// The process's threads first, then the machine's count: a thread of
	// this process that becomes runnable in between counts as another's
	// at worst, and one reading decides nothing (see Summary).
	tasks, err := os.ReadDir(p.path(p.self(), "task"))
	if err != nil {
		return r, fmt.Errorf("sysload: %w", err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if d, ok := schedDelay(p.path(p.self(), "task", t.Name(), "schedstat")); ok {
			r.Delay[tid] = d
		}
		if taskRunnable(p.path(p.self(), "task", t.Name(), "stat")) {
			r.Own++
		}
	}
	stat, err := os.ReadFile(p.path("stat"))
	if err != nil {
		return r, fmt.Errorf("sysload: %w", err)
	}
	running, ok := statField(string(stat), "procs_running")
	if !ok {
		return r, fmt.Errorf("sysload: %s has no procs_running line", p.path("stat"))
	}
	r.Running = running
	if la, err := os.ReadFile(p.path("loadavg")); err == nil {
		if f := strings.Fields(string(la)); len(f) > 0 {
			r.Load1, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	return r, nil
}

// schedDelay is the run delay (the second field) of a schedstat file.
func schedDelay(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	d, err := strconv.ParseInt(f[1], 10, 64)
	return d, err == nil && d >= 0
}

// taskRunnable reports whether a task's stat file says state R. The
// state follows the command name in parentheses, which may itself hold
// spaces and parentheses: it is the field after the last ')'.
func taskRunnable(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(s[i+1:])
	return len(f) > 0 && f[0] == "R"
}

// statField is the value of a "name value" line of /proc/stat.
func statField(stat, name string) (int, bool) {
	for line := range strings.Lines(stat) {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == name {
			v, err := strconv.Atoi(f[1])
			return v, err == nil && v >= 0
		}
	}
	return 0, false
}

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

// Busy reports whether the machine was busy, and why in words: in the
// median reading another process's task was runnable (BusyOthers). The
// process's own run delay is said beside it, but decides nothing: a
// process that keeps every CPU busy itself (a check's pinned spinning
// threads, its timer and reader threads beside them) makes its threads
// wait for one another, half a CPU's time on a quiet 2-CPU machine.
// Fewer than two readings say nothing.
func (s Summary) Busy() (bool, string) {
	if s.Readings < 2 || s.OthersMedian < BusyOthers {
		return false, ""
	}
	why := fmt.Sprintf("%s runnable tasks of other processes in the median reading (at most %d)", strconv.FormatFloat(s.OthersMedian, 'f', -1, 64), s.OthersMax)
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

// Watch reads the machine every interval in a goroutine of its own until
// Stop.
type Watch struct {
	p        Proc
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	readings []Reading
	err      error
}

// maxReadings caps what a Watch keeps: past it, every other reading is
// dropped (the first and the latest stay), so a watch of days stays
// small.
const maxReadings = 4096

// Start starts a Watch that reads p at once and then every interval
// (at least a millisecond).
func Start(p Proc, interval time.Duration) *Watch {
	w := &Watch{p: p, stop: make(chan struct{}), done: make(chan struct{})}
	w.read()
	go func() {
		defer close(w.done)
		t := time.NewTicker(max(interval, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				w.read()
			}
		}
	}()
	return w
}

func (w *Watch) read() {
	r, err := w.p.Read()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if w.err == nil {
			w.err = err
		}
		return
	}
	w.readings = append(w.readings, r)
	if len(w.readings) > maxReadings {
		keep := w.readings[:1]
		for i := 2; i < len(w.readings); i += 2 {
			keep = append(keep, w.readings[i])
		}
		if keep[len(keep)-1].When != r.When {
			keep = append(keep, r)
		}
		w.readings = keep
	}
}

// Stop takes a last reading, ends the watch and sums up what it saw; the
// error is the first failed reading's (a system without these files).
// Stop may be called once.
func (w *Watch) Stop() (Summary, error) {
	close(w.stop)
	<-w.done
	w.read()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil && len(w.readings) < 2 {
		return Summary{}, w.err
	}
	return Summarise(w.readings, w.p.cpus()), nil
}
