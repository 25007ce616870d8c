package sysload

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
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
	// Children counts the threads of the process's child processes as
	// its own too: a harness whose measured code runs in a child (a C
	// program it starts) is not competing with itself. It scans the
	// process table at every reading (at most maxScan processes).
	Children bool
	// OnlyCPUs are the CPUs whose busy time a reading's Usage sums (the
	// CPUs the process may use); empty: every CPU.
	OnlyCPUs []int

	// readStat reads the machine's stat file instead of Root's (tests:
	// a count that changes between two reads).
	readStat func() ([]byte, error)
}

// maxScan caps the processes a reading with Children looks at.
const maxScan = 4096

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
	// Running is procs_running, runnable tasks on the whole machine: the
	// lower of two reads, before and after Own was counted (see Read).
	Running int
	// Load1 is the one-minute load average.
	Load1 float64
	// Usage is the busy CPU time of Proc.OnlyCPUs and the process's own
	// (ReadUsage), where HasUsage: what Summarise tells other processes'
	// CPU time from.
	Usage    Usage
	HasUsage bool
}

// Others is how many runnable tasks were not the process's own.
func (r Reading) Others() int { return max(r.Running-r.Own, 0) }

// Read takes one reading. It fails where the system has no proc
// filesystem (or not these files).
func (p Proc) Read() (Reading, error) {
	r := Reading{When: time.Now(), Delay: map[int]int64{}}
	// The machine's count before and after the process's own threads,
	// the lower of the two: a thread of the process (or of a child) that
	// becomes runnable or stops between the counts would otherwise count
	// as another's. A harness that starts short runs of a child many
	// times a second read one such task in the median reading on a quiet
	// machine. A task of another process that stays runnable is in both.
	before, _, err := p.procsRunning()
	if err != nil {
		return r, err
	}
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
	if p.Children {
		r.Own += p.childrenRunnable()
	}
	after, stat, err := p.procsRunning()
	if err != nil {
		return r, err
	}
	r.Running = min(before, after)
	if u, err := p.usage(stat, p.OnlyCPUs); err == nil { // the stat file just read
		r.Usage, r.HasUsage = u, true
	}
	if la, err := os.ReadFile(p.path("loadavg")); err == nil {
		if f := strings.Fields(string(la)); len(f) > 0 {
			r.Load1, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	return r, nil
}

// procsRunning reads procs_running, the machine's runnable tasks, and
// returns the stat file it read.
func (p Proc) procsRunning() (int, []byte, error) {
	read := p.readStat
	if read == nil {
		read = func() ([]byte, error) { return os.ReadFile(p.path("stat")) }
	}
	stat, err := read()
	if err != nil {
		return 0, nil, fmt.Errorf("sysload: %w", err)
	}
	running, ok := statField(string(stat), "procs_running")
	if !ok {
		return 0, nil, fmt.Errorf("sysload: %s has no procs_running line", p.path("stat"))
	}
	return running, stat, nil
}

// childrenRunnable counts the runnable threads of the process's child
// processes (those whose parent, in their stat file, is the process).
func (p Proc) childrenRunnable() int {
	self := p.self()
	if self == "self" {
		self = strconv.Itoa(os.Getpid())
	}
	f, err := os.Open(p.path())
	if err != nil {
		return 0
	}
	defer f.Close()
	names, _ := f.Readdirnames(maxScan)
	n := 0
	for _, name := range names {
		if _, err := strconv.Atoi(name); err != nil || name == self {
			continue
		}
		if parent(p.path(name, "stat")) != self {
			continue
		}
		tasks, err := os.ReadDir(p.path(name, "task"))
		if err != nil {
			continue
		}
		for _, t := range tasks {
			if taskRunnable(p.path(name, "task", t.Name(), "stat")) {
				n++
			}
		}
	}
	return n
}

// parent is the parent process id in a stat file ("" if unreadable).
func parent(path string) string {
	if f := statFields(path); len(f) > 1 {
		return f[1]
	}
	return ""
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

// taskRunnable reports whether a task's stat file says state R.
func taskRunnable(path string) bool {
	f := statFields(path)
	return len(f) > 0 && f[0] == "R"
}

// statFields are the fields of a stat file after the command name, which
// may itself hold spaces and parentheses: those after the last ')' (the
// state first, then the parent's id); none if unreadable.
func statFields(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
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
