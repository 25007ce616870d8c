package check

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cmd/internal/ompcheck"
	"github.com/barriertune/barriertune/cmd/internal/pairs"
	"github.com/barriertune/barriertune/cmd/internal/sysload"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/results"
)

// The OpenMP step: where a compiler builds with -fopenmp against a runtime
// (gcc: libgomp; clang: libomp), the check times OpenMP loops (a plain
// barrier loop and a stencil, steady runs) under the runtime's defaults
// and under settings of the runtime's own variables, per measured thread
// count (cmd/internal/ompcheck, cmd/internal/pairs), and records what it
// found in the file (results.OpenMP): a count whose runs were too few to
// decide says so with the budget that would decide it. It runs after the algorithms'
// measurement, in what the budget left of it (the runtimes' window, which
// it shares with the MPI step): the algorithms' results are those of a
// check without it.

// minOpenMPWindow is the least time the step starts with: less cannot
// time a count's settings beside its defaults.
const minOpenMPWindow = 3 * time.Second

// openMPSeconds is each loop shape's timed span in one run, cut in ten
// chunks of 3 ms (a lost time slice spoils one chunk, which the median
// of the chunks ignores), after openMPWarmup of untimed warm-up (the
// runtime's threads started and placed before anything is timed).
const (
	openMPSeconds = 0.03
	openMPWarmup  = 0.02
)

// openMPMeasurer builds the OpenMP loop (Hardware: with this machine's
// compilers; a simulation has none).
type openMPMeasurer interface {
	// OpenMPToolchains are the compilers and runtimes to try.
	OpenMPToolchains() []ompcheck.Toolchain
	// BuildOpenMP builds the loop with tc into dir.
	BuildOpenMP(ctx context.Context, tc ompcheck.Toolchain, dir string) (*ompcheck.Program, error)
}

// OpenMPToolchains are gcc (libgomp) and clang (libomp).
func (Hardware) OpenMPToolchains() []ompcheck.Toolchain { return ompcheck.Toolchains() }

// BuildOpenMP builds the loop with tc's compiler (ompcheck.Build).
func (Hardware) BuildOpenMP(ctx context.Context, tc ompcheck.Toolchain, dir string) (*ompcheck.Program, error) {
	return ompcheck.Build(ctx, tc, dir)
}

// openMPVerdict judges a setting's runs against the defaults' runs paired
// with them as the check judges a runner-up: the setting is faster only
// when the defaults' median is more than TieFraction (3%) slower than its
// median and the significance test (Mann-Whitney U) tells them apart.
func openMPVerdict(defaults, setting []float64) pairs.Verdict {
	md, ms := medianOf(defaults), medianOf(setting)
	v := pairs.Verdict{MarginPct: 100 * (md/ms - 1)}
	switch {
	case within(ms, md):
		v.Test = "within 3%: the setting's median is not 3% below the defaults'"
	case !separable(defaults, setting):
		v.Test = fmt.Sprintf("not separable by the test: a Mann-Whitney U test on %d runs of each cannot tell them apart (p >= %g)", min(len(defaults), len(setting)), measure.Alpha)
	default:
		v.Faster = true
		v.Test = fmt.Sprintf("more than 3%% faster, and a Mann-Whitney U test on %d runs of each tells them apart (p %.2g < %g)", min(len(defaults), len(setting)), measure.Compare(defaults, setting).P, measure.Alpha)
	}
	return v
}

// measureOpenMP runs the OpenMP step (on a busy machine, the algorithms'
// measurement's or a probe's just before, it measures but chooses
// nothing: what is faster under others' load may be slower quiet) for f's measured thread counts
// until the budget's deadline, at most OpenMPShare of the budget, and
// records it in f.OpenMP; where the measurer builds no OpenMP loop (a
// simulation), and for a check restricted to some algorithms, it records
// nothing. Without a compiler or runtime, or
// without the time, the record says so per runtime, and the check goes
// on.
func measureOpenMP(ctx context.Context, f *results.File, cfg Config, m Measurer, deadline time.Time, split int) {
	om, ok := m.(openMPMeasurer)
	if !ok || f == nil || f.Simulated || ctx.Err() != nil || len(cfg.Algorithms) < len(catalog.Names()) {
		// A check restricted to some algorithms (--algorithms) is an
		// experiment on them, not the install-time check: no OpenMP step.
		return
	}
	start := m.Now()
	window := deadline.Sub(start)
	split = max(split, 1)
	rec := &results.OpenMP{
		Loop:  fmt.Sprintf("one parallel region: %g ms of untimed warm-up (longer, up to 300 ms, until the threads are spread over the CPUs), then a plain barrier (#pragma omp barrier) after 64 multiply-adds per thread and a 1-D stencil of 256 points per thread with a barrier per step, %g ms each in 10 chunks; a run whose chunks show a transition is rerun; the time is the median chunk (cmd/internal/ompcheck/csrc/omploop.c)", openMPWarmup*1000, openMPSeconds*1000),
		Share: shareWords(cfg.Budget, window, split),
	}
	f.OpenMP = rec
	defer func() { rec.Seconds = roundTo(m.Now().Sub(start).Seconds(), 3) }()
	var counts []int
	for _, t := range f.Threads {
		if t.Best != nil && !slices.Contains(counts, t.Threads) {
			counts = append(counts, t.Threads)
		}
	}
	slices.Sort(counts)
	tcs := om.OpenMPToolchains()
	notMeasured := func(why string) {
		for _, tc := range tcs {
			rec.Runtimes = append(rec.Runtimes, results.OpenMPRuntime{Name: tc.Runtime, Compiler: tc.Compiler, NotMeasured: why})
		}
	}
	switch {
	case len(counts) == 0:
		notMeasured("no thread count has a winner")
		return
	case window < minOpenMPWindow:
		notMeasured(fmt.Sprintf("the budget left %s, less than the %s the step needs (run the check with a larger --budget)", max(window, 0).Round(time.Millisecond), minOpenMPWindow))
		return
	}
	outer := ctx // ended by a signal, not by the step's window
	ctx, cancel := m.Bound(ctx, start.Add(window))
	defer cancel()
	dir, err := os.MkdirTemp("", "barriertune-openmp-")
	if err != nil {
		notMeasured(fmt.Sprintf("no directory to build in: %v", err))
		return
	}
	defer os.RemoveAll(dir)
	var progs []*ompcheck.Program
	for _, tc := range tcs {
		r := results.OpenMPRuntime{Name: tc.Runtime, Compiler: tc.Compiler}
		if cfg.Progress != nil {
			cfg.Progress(Progress{Step: fmt.Sprintf("OpenMP: building the barrier loop with %s -fopenmp (%s)", tc.Compiler, tc.Runtime)})
		}
		p, err := om.BuildOpenMP(ctx, tc, dir)
		if err != nil {
			r.NotMeasured = err.Error()
		} else {
			r.Compiler, r.Library, r.Version = p.Compiler, p.Library, p.Version
			progs = append(progs, p)
		}
		rec.Runtimes = append(rec.Runtimes, r)
	}
	if len(progs) == 0 {
		return
	}
	cpus, list := len(counts), "" // unknown: no count is above the CPUs
	if s, err := cpuset.ParseList(f.Machine.AllowedCPUs); err == nil && !s.IsEmpty() {
		cpus, list = s.Len(), s.String()
	}
	tune := ompcheck.Config{
		Programs: progs, Threads: counts, CPUs: cpus, CPUList: list,
		Seconds: openMPSeconds, Warmup: openMPWarmup,
		Verdict: openMPVerdict, Now: m.Now,
	}
	if cfg.Progress != nil {
		tune.Progress = func(s string) {
			cfg.Progress(Progress{Step: s, Elapsed: m.Now().Sub(start), Remaining: start.Add(window).Sub(m.Now())})
		}
	}
	busy := ""
	if f.Busy() {
		busy = f.Load.Why
	} else if why := busyProbe(ctx, m, allowedList(f.Machine.AllowedCPUs)); why != "" {
		busy = why
	}
	floor := hostFloor(ctx, m, f.Machine.AllowedCPUs)
	during := stepWatch(m, allowedList(f.Machine.AllowedCPUs))
	choices := ompcheck.Tune(ctx, tune)
	if why := during(); busy == "" && why != "" {
		busy = why
	}
	rec.HostFloorBeforeNs, rec.HostFloorAfterNs, rec.HostMoved = bracketFloors(floor, hostFloor(ctx, m, f.Machine.AllowedCPUs))
	// The budget that would decide every count not decided: the step's
	// time so far and what those counts need, beyond its window, times
	// the steps that share the window, added to this budget.
	need := m.Now().Sub(start)
	for _, c := range choices {
		if !c.Decided {
			need += c.NeedBudget
		}
	}
	budgetNeeded := budgetFor(cfg.Budget, window, need, split)
	for _, c := range choices {
		r := rec.Runtime(c.Runtime)
		oc := results.OpenMPCount{Threads: c.Threads, Failed: c.Failed, Settings: c.Settings, Runs: c.Runs, Pairs: c.Pairs, Unsteady: c.Unsteady}
		why := c.Why
		stopped := !c.Decided && outer.Err() != nil
		if stopped {
			// Stopped, not out of budget: a larger budget would not
			// have helped.
			if head, _, ok := strings.Cut(why, ";"); ok {
				why = head
			}
			why = strings.Replace(why, "the OpenMP share of the budget ran out", "the check was stopped", 1)
			why += fmt.Sprintf(" (stopped: %v)", context.Cause(outer))
		}
		if !c.Decided && c.NeedBudget > 0 && !stopped {
			if head, _, ok := strings.Cut(why, ";"); ok {
				why = head
			}
			why += fmt.Sprintf("; a budget of %s (--budget) would give them", budgetNeeded)
			oc.NeedBudgetS = budgetNeeded.Seconds()
		}
		switch {
		case !c.Measured:
			oc.NotMeasured = why
		case !c.Decided:
			oc.DefaultNs, oc.DefaultStencilNs, oc.NotDecided = roundTo(c.DefaultNs, 1), roundTo(c.DefaultStencilNs, 1), why
		default:
			oc.DefaultNs, oc.DefaultStencilNs, oc.Why = roundTo(c.DefaultNs, 1), roundTo(c.DefaultStencilNs, 1), why
			switch {
			case c.Setting != nil && busy != "":
				// Faster under others' load (a waiter that blocks while
				// its partner has lost its CPU) may be slower quiet.
				oc.Why = fmt.Sprintf("%s was faster (%.0f against %.0f ns, defaults %+.1f%% slower), but the machine was busy (%s): a setting faster under others' load may be slower on the quiet machine, so none is chosen; run the check when it is quiet", c.Setting, c.Ns, c.DefaultNs, c.MarginPct, busy)
			case c.Setting != nil:
				oc.Best, oc.BestNs, oc.BestStencilNs, oc.MarginPct, oc.Test = slices.Clone([]string(c.Setting)), roundTo(c.Ns, 1), roundTo(c.StencilNs, 1), roundTo(c.MarginPct, 1), c.Test
			}
		}
		r.Counts = append(r.Counts, oc)
	}
}

// roundTo rounds x to digits decimal places, for the file.
func roundTo(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// stepLoad is implemented by measurers that can tell what else used
// the CPUs while a runtime step ran (Hardware); fakes and simulations do
// not, and their steps are never called busy by it.
type stepLoad interface {
	// Usage reads the busy CPU time of the CPUs in cpus (every CPU when
	// empty) and the check's own, its waited-for children's included
	// (sysload.Proc.ReadUsage).
	Usage(cpus []int) (sysload.Usage, error)
}

// Usage reads the CPUs' and the check's CPU time from /proc/stat and
// getrusage.
func (Hardware) Usage(cpus []int) (sysload.Usage, error) { return sysload.Proc{}.ReadUsage(cpus...) }

// allowedList is the CPU list of a results file's allowed CPUs, nil
// (every CPU) where it does not parse.
func allowedList(allowed string) []int {
	s, err := cpuset.ParseList(allowed)
	if err != nil || s.IsEmpty() {
		return nil
	}
	return s.Members()
}

// stepWatch reads the CPU time of the CPUs in cpus (the check's allowed
// ones; nil: every CPU) at a runtime step's start; the function it
// returns, called when the step's runs have all ended, says why the
// machine was busy while the step ran (other processes used a quarter of
// a CPU or more of those CPUs: load that came after the probe before
// it), or "" when it was quiet, or m cannot tell. The step's runs are the
// check's children and count as its own.
func stepWatch(m Measurer, cpus []int) func() string {
	sl, ok := m.(stepLoad)
	if !ok {
		return func() string { return "" }
	}
	a, err := sl.Usage(cpus)
	if err != nil {
		return func() string { return "" }
	}
	return func() string {
		b, err := sl.Usage(cpus)
		if err != nil {
			return ""
		}
		if busy, why := sysload.BusyBetween(a, b); busy {
			return why + " while the step ran"
		}
		return ""
	}
}

// busyProbe says why the machine is busy just before a runtime step
// (other processes used a quarter of a CPU or more of the CPUs in cpus,
// the check's allowed ones, over a look of 200 ms,
// and again over a second look of 300 ms after a pause of 200 ms), or ""
// when it is quiet or m cannot tell (fakes, simulations). It is read
// before the step: the step's own runs are other processes until they
// end. The check sleeps while it looks, so a competing process has the
// CPUs to use. Counting runnable tasks instead read a quiet machine busy
// (one task in the median reading, twice in a row) for a check started
// by another program.
func busyProbe(ctx context.Context, m Measurer, cpus []int) string {
	sl, ok := m.(stepLoad)
	if !ok {
		return ""
	}
	sleep := func(d time.Duration) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	return busyLooks(func(d time.Duration) (bool, string) {
		a, err := sl.Usage(cpus)
		if err != nil {
			return false, ""
		}
		sleep(d)
		b, err := sl.Usage(cpus)
		if err != nil || ctx.Err() != nil {
			return false, ""
		}
		return sysload.BusyBetween(a, b)
	}, sleep)
}

// busyLooks takes a look of 200 ms and, where it finds the machine busy,
// a second one of 300 ms after a pause of 200 ms: busy only when both
// are, with the second's reason.
func busyLooks(look func(time.Duration) (bool, string), sleep func(time.Duration)) string {
	if busy, _ := look(200 * time.Millisecond); !busy {
		return ""
	}
	sleep(200 * time.Millisecond)
	if busy, why := look(300 * time.Millisecond); busy {
		return why
	}
	return ""
}

// shareWords says what part of the budget a runtime step had: its part of
// what the algorithms left.
func shareWords(budget, window time.Duration, split int) string {
	part := "what the algorithms' measurement left of the budget"
	if split > 1 {
		part = fmt.Sprintf("1/%d of %s (the runtimes' window, shared with the MPI step; the MPI step also takes what the OpenMP step leaves)", split, part)
	}
	return fmt.Sprintf("%s: %s of the %s budget", part, max(window, 0).Round(time.Millisecond), budget.Round(time.Millisecond))
}

// budgetFor is the budget, rounded up to 10 s, that would give a runtime
// step need instead of window, where split steps share what the
// algorithms leave.
func budgetFor(budget, window, need time.Duration, split int) time.Duration {
	b := budget + max(need-window, 0)*time.Duration(max(split, 1))
	r := b.Round(10 * time.Second)
	if r < b {
		r += 10 * time.Second
	}
	return r
}

// hostFloor is the floor between the first two of the allowed CPUs (a
// CPU list), or 0 where there are not two or it cannot be measured: the
// host state the OpenMP step's times belong to.
func hostFloor(ctx context.Context, m Measurer, allowed string) float64 {
	set, err := cpuset.ParseList(allowed)
	if err != nil || set.Len() < 2 || !m.CanPingPong() || ctx.Err() != nil {
		return 0
	}
	cpus := set.Members()
	pp, err := m.Floor(cpus[0], cpus[1], measure.Options{Samples: 15, Context: ctx})
	if err != nil || !(pp.MedianNs > 0) {
		return 0
	}
	return pp.MedianNs
}

// bracketFloors records the floors measured before and after the step,
// and says when they are ompcheck.HostMovedFactor apart or more: the host moved
// between states while the step measured.
func bracketFloors(before, after float64) (float64, float64, string) {
	if !(before > 0) || !(after > 0) {
		return 0, 0, ""
	}
	before, after = roundTo(before, 1), roundTo(after, 1)
	if max(before, after) < ompcheck.HostMovedFactor*min(before, after) {
		return before, after, ""
	}
	return before, after, fmt.Sprintf("the host moved between states during the step (the floor read %.0f ns before it and %.0f ns after): its times mix the two, and a run compared with them reads differently in either; check again for times to compare", before, after)
}
