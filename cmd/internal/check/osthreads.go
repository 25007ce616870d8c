package check

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/results"
)

// Above the allowed CPUs the check's best is what goroutines need (the Go
// scheduler's switches, parking in user space), and it may be the
// goroutine barrier, which means nothing to a C or C++ program. Such a
// program's threads are OS threads: a waiter that blocks sleeps in the
// kernel and its wake-up is the kernel's. So for every count above the
// allowed CPUs the check also times the algorithms a C program can run
// on OS threads of their own (each participant locked to its thread,
// unpinned, blocking waits) and records its choice among them
// (bestOnOSThreads) as the entry's OSThreads, which the C exports use.

// osThreadsMeasurer is a Measurer that can time candidates on OS threads
// (Hardware; the model cannot say what the kernel's wake-ups cost).
type osThreadsMeasurer interface {
	OSThreads(cpus cpuset.Placement, cands []measure.Candidate, opts measure.Options) (measure.Run, error)
}

// OSThreads times the candidates on cpus, every participant on an OS
// thread of its own (measure.Options.OSThreads).
func (Hardware) OSThreads(cpus cpuset.Placement, cands []measure.Candidate, opts measure.Options) (measure.Run, error) {
	opts.OSThreads = true
	return measure.Barriers(cpus, cands, opts)
}

// osThreadAlgorithms are the candidates on OS threads: one counter and one
// wake-up of all (central), counters in a tree (combining), a tree of flags
// with one release (static-tree), and the logarithmic exchanges
// (dissemination, tournament), all blocking waits.
var osThreadAlgorithms = [...]string{algname.Central, algname.Combining, algname.StaticTree, algname.Dissemination, algname.Tournament}

// osThreadsSamples and osThreadsTarget size the measurement: about 5 ms
// per candidate and count after calibration.
const (
	osThreadsSamples = 9
	osThreadsTarget  = 500 * time.Microsecond
)

// measureOSThreads fills OSThreads for every count of f above its allowed
// CPUs that has a best and none yet (a resumed entry keeps its own), until
// ctx ends: in C with the exported header's barrier where the measurer
// builds that program (osThreadsCMeasurer: a C compiler is found), else,
// or for a count where the program fails, on Go's OS threads, with a cut
// saying why. Where the measurer cannot time OS threads at all (a
// simulation) nothing is recorded; a count whose measurement fails is
// left without, with a cut saying why.
func measureOSThreads(ctx context.Context, f *results.File, m Measurer) {
	om, ok := m.(osThreadsMeasurer)
	if !ok || f == nil {
		return
	}
	allowed, err := cpuset.ParseList(f.Machine.AllowedCPUs)
	if err != nil {
		return
	}
	var todo []*results.Threads
	for i := range f.Threads {
		t := &f.Threads[i]
		if t.Threads <= allowed.Len() || t.Best == nil || t.OSThreads != nil || len(t.Best.CPUs) != t.Threads {
			continue
		}
		todo = append(todo, t)
	}
	if len(todo) == 0 {
		return
	}
	var prog *cOSThreads
	if cm, ok := m.(osThreadsCMeasurer); ok && ctx.Err() == nil {
		if dir, err := os.MkdirTemp("", "barriertune-osthreads-"); err != nil {
			f.Cuts = append(f.Cuts, fmt.Sprintf("OS threads timed with Go's, not in C: no directory to build in: %v", err))
		} else {
			defer os.RemoveAll(dir)
			if prog, err = cm.BuildOSThreadsC(ctx, dir); err != nil {
				f.Cuts = append(f.Cuts, fmt.Sprintf("OS threads timed with Go's, not in C: %v", err))
			}
		}
	}
	cands := make([]measure.Candidate, len(osThreadAlgorithms))
	for i, a := range osThreadAlgorithms {
		cands[i] = measure.Candidate{Algorithm: a, Policy: barriers.Park}
	}
	for _, t := range todo {
		if ctx.Err() != nil {
			f.Cuts = append(f.Cuts, fmt.Sprintf("%d threads on OS threads not measured: the budget ran out", t.Threads))
			continue
		}
		if prog != nil {
			run, err := prog.run(ctx, t.Threads, osThreadAlgorithms[:], osThreadsSamples, osThreadsTarget)
			if err == nil {
				if c := bestOnOSThreads(run, t.Best.CPUs); c != nil {
					c.Label = fmt.Sprintf("%s (%s)", OSThreadsCLabel, prog.compiler)
					t.OSThreads = c
					continue
				}
				err = errors.New("no candidate finished a sample")
			}
			if ctx.Err() != nil {
				f.Cuts = append(f.Cuts, fmt.Sprintf("%d threads on OS threads not measured: the budget ran out", t.Threads))
				continue
			}
			f.Cuts = append(f.Cuts, fmt.Sprintf("%d threads on OS threads timed with Go's, not in C: %v", t.Threads, err))
		}
		run, err := om.OSThreads(t.Best.CPUs, cands, measure.Options{Context: ctx, Samples: osThreadsSamples, SampleTarget: osThreadsTarget, MayEndEmpty: true})
		if err != nil {
			f.Cuts = append(f.Cuts, fmt.Sprintf("%d threads on OS threads not measured: %v", t.Threads, err))
			continue
		}
		if t.OSThreads = bestOnOSThreads(run, t.Best.CPUs); t.OSThreads == nil {
			f.Cuts = append(f.Cuts, fmt.Sprintf("%d threads on OS threads not measured: no candidate finished a sample", t.Threads))
		}
	}
}

// bestOnOSThreads is the OS-thread choice of run (nil when nothing was
// measured): the simplest candidate (catalog order: central first) that
// no other beats by the margin and the test (beats), with the fastest
// other candidate as its runner-up and the margin to it (negative when
// the runner-up's median was lower but did not beat it). A plain
// "fastest median wins" picked at random on Go's OS threads, where every
// blocking wait is a hand-over between the Go scheduler and the kernel:
// central and combining, which make the same number of them, took turns
// as the fastest by 5-20% (6 runs of 4 and 8 threads on the 2-vCPU EPYC
// guest, 58-186 µs an episode, 95% intervals 30-60% wide), where the
// exported C header runs central 12% faster than combining at 16 threads
// and static-tree, dissemination and tournament 1.8-4x slower
// (docs/cbarrier.md). Timed in C the samples are tight and the rule
// rarely matters.
func bestOnOSThreads(run measure.Run, cpus cpuset.Placement) *results.Choice {
	var ok []*measure.Result
	for i := range run.Results {
		if r := &run.Results[i]; r.Reps > 0 && r.MedianNs > 0 {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	slices.SortStableFunc(ok, func(a, b *measure.Result) int { return rank(a.Algorithm) - rank(b.Algorithm) })
	var win *measure.Result
	for _, c := range ok {
		if !slices.ContainsFunc(ok, func(d *measure.Result) bool { return beats(d, c) }) {
			win = c
			break
		}
	}
	if win == nil { // unreachable: nothing beats the fastest median
		win = slices.MinFunc(ok, func(a, b *measure.Result) int { return cmp.Compare(a.MedianNs, b.MedianNs) })
	}
	c := &results.Choice{
		Spec:     results.Spec{Algorithm: win.Algorithm, Policy: win.Policy, FanIn: win.FanIn},
		CPUs:     append([]int(nil), cpus...),
		Label:    OSThreadsGoLabel,
		MedianNs: win.MedianNs, CILowNs: win.CILowNs, CIHighNs: win.CIHighNs,
	}
	var runner *measure.Result
	for _, r := range ok {
		if r != win && (runner == nil || r.MedianNs < runner.MedianNs) {
			runner = r
		}
	}
	if runner != nil {
		c.RunnerUp = runner.Algorithm
		c.MarginPct = math.Round((runner.MedianNs/win.MedianNs-1)*1000) / 10
		if !beats(win, runner) {
			c.Tie, c.TieRule = true, TieOSThreads
		}
	}
	return c
}

// TieOSThreads is Choice.TieRule of an OS-thread choice (OSThreads) that
// its runner-up did not trail by the margin and the test (bestOnOSThreads).
const TieOSThreads = "on OS threads the simplest algorithm (catalog order) wins unless another's median is more than 3% lower and a Mann-Whitney U test on the samples tells them apart (p < 0.05); the runner-up's margin may be negative"

// beats reports whether d is faster than c by the margin and the test:
// its median more than TieFraction lower, and the samples separable.
func beats(d, c *measure.Result) bool {
	return d != c && !within(d.MedianNs, c.MedianNs) && separable(d.Samples, c.Samples)
}

// OSThreadsNote says, when f recorded OS-thread choices (OSThreads), what
// a C, C++ or OpenMP program's threads get at those counts, and how they
// were timed (in C with the exported header, or with Go's OS threads):
// the table's best there is what goroutines need, and the C exports use
// these instead. "" when there are none.
func OSThreadsNote(f *results.File) string {
	if f == nil {
		return ""
	}
	var parts, origins []string
	for _, t := range f.Threads {
		if o := t.OSThreads; o != nil {
			parts = append(parts, fmt.Sprintf("%s %s at %d", o.Algorithm, usOrNs(o.MedianNs), t.Threads))
			origins = append(origins, osThreadsOrigin(o.Label))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	if slices.Equal(origins, slices.Repeat(origins[:1], len(origins))) {
		return "on OS threads (what C, C++ and OpenMP programs run; barriertune export uses these): " + strings.Join(parts, ", ") + " threads, " + origins[0]
	}
	for i := range parts {
		parts[i] += " (" + origins[i] + ")"
	}
	return "on OS threads (what C, C++ and OpenMP programs run; barriertune export uses these): " + strings.Join(parts, ", ") + " threads"
}

// osThreadsOrigin says how an OS-thread choice with label was timed.
func osThreadsOrigin(label string) string {
	if rest, ok := strings.CutPrefix(label, OSThreadsCLabel); ok {
		return "timed in C with the exported header" + rest
	}
	return "timed with Go's OS threads (not C figures)"
}

// usOrNs formats a time in ns as ns below 10 µs and as µs above.
func usOrNs(ns float64) string {
	if ns < 10_000 {
		return fmt.Sprintf("%.0f ns", ns)
	}
	return fmt.Sprintf("%.1f µs", ns/1000)
}
