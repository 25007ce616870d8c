// Package check is the install-time check: it times every barrier
// algorithm on representative placements of every chosen thread count,
// measures the core-to-core floor at each level of the CPU tree, and picks
// the winners, within a time budget. The outcome is a results.File.
//
// Run is one pipeline of four steps: plan (defaults.go: validate the
// Config and fill in its defaults; plan.go: choose thread counts,
// placements, candidates and samples to fit the budget; prune.go: prune
// with the cost model when the space is too big), measure (measure.go: the floors and every candidate on
// every placement, in interleaved rounds, then a play-off of the closest),
// select (select.go: the winner and the robust choice of each thread
// count) and assemble (write.go: the results.File, what is partial and
// what was cut). Only the Measurer differs between a live check
// (Hardware: pinned threads on this machine) and a simulated one
// (ModelMeasurer: the cost model, optional noise and a simulated clock);
// Plan is the same plan step, measuring nothing (check --plan).
//
// The hybrid is measured like the flat algorithms, composed for each
// placement from the tree and the measured floors (hybrid_candidate.go);
// its composition and level keys are recorded with its measurements and,
// when it wins, in the winner, so that barriers.Auto builds the same
// barrier.
package check

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/cmd/internal/sysload"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/results"
)

// DefaultBudget bounds a check whose Config leaves Budget zero: about a
// minute, what a person accepts at install time.
const DefaultBudget = 60 * time.Second

// DefaultSampleTime is the duration of one sample when Config leaves
// SampleTarget zero (the one place this default is written).
const DefaultSampleTime = 200 * time.Microsecond

// TieFraction: winners within 3% of the best are tied; the simpler
// algorithm (catalog order) wins (select.go, tie.go).
const TieFraction = 0.03

// ImpossibleFraction: a winner whose episode is below this fraction of
// its floor (one flag signal each way between its first two CPUs) is
// measured again beside the floor before it may win; the file records the
// repeat (results.Repeat) and a rejection (results.Measurement.Rejected).
const ImpossibleFraction = 0.8

// loadInterval is how often a live check reads how busy the machine is
// (cmd/internal/sysload: a few proc files, tens of µs a reading).
const loadInterval = 100 * time.Millisecond

// LoadRecord is the file's record of what a watch over a check saw; nil
// when the system could not say.
func LoadRecord(s sysload.Summary, err error) *results.Load {
	if err != nil || s.Readings < 2 {
		return nil
	}
	busy, why := s.Busy()
	round := func(x float64) float64 { return math.Round(x*1000) / 1000 }
	return &results.Load{
		Busy: busy, Why: why, Readings: s.Readings, Seconds: round(s.Duration.Seconds()),
		OtherRunnable: s.OthersMedian, OtherRunnableMax: s.OthersMax, RunDelayShare: round(s.DelayShare),
		LoadAvgStart: s.Load1Start, LoadAvgEnd: s.Load1End,
	}
}

// The check's internal defaults.
const (
	defaultSamples = 31   // samples per candidate before budget cuts
	minSamples     = 9    // the fewest samples per candidate budget cuts leave
	dropFactor     = 2.0  // a candidate twice as slow as the best is dropped
	maxRounds      = 10   // passes over every placement when the budget leaves room
	defaultKeep    = 3    // predicted-best algorithms kept per thread count when pruning
	maxPUs         = 8192 // Linux on x86-64 boots with up to 8192 CPUs (CONFIG_NR_CPUS)
)

// baselines are measured at every measured thread count whatever the
// model predicts when pruning, so that a wrong model is caught against
// known quantities.
func baselines() []string { return []string{algname.Central, algname.Dissemination} }

// Config describes a check. Zero values take the defaults.
type Config struct {
	// Topology is the tree to place threads on (the live one for a real
	// check).
	Topology *hwtree.Topology
	// Threads are the thread counts; default DefaultThreadCounts with
	// the tree's boundaries (WithBoundaryCounts).
	Threads []int
	// SetsLimit is the most placements per thread count (default
	// configsets.DefaultLimit).
	SetsLimit int
	// Algorithms filters the catalog (default: all).
	Algorithms []string
	// Budget bounds the whole check (default DefaultBudget).
	Budget time.Duration
	// SampleTarget is the duration of one sample (default
	// DefaultSampleTime).
	SampleTarget time.Duration
	// Progress, when set, is called before each placement is measured.
	Progress func(Progress)
	// Resume continues a partial file: its thread counts with every round
	// done and its floors are kept, the missing rounds of the others are
	// measured and pooled with its samples.
	Resume *results.File
	// Version is the tool version written into the file.
	Version string

	// Measurer measures (default: Hardware, pinned threads on this
	// machine; a ModelMeasurer simulates).
	Measurer Measurer
	// Model ranks the candidates when the space is too big for the budget
	// (default model.DefaultModel, which prices contention).
	Model model.Kind
	// Keep is how many predicted-best algorithms per thread count pruning
	// keeps besides the baselines central and dissemination (default 3).
	Keep int
	// Exhaustive measures every candidate at every thread count: no
	// pruning, no cuts for the budget.
	Exhaustive bool
	// Costs are the latencies pruning predicts with before the floors are
	// measured (default: the Resume file's per-level latencies, else the
	// tree's typical latencies, model.NewTreeCosts). A ModelMeasurer's
	// costs are used when it measures.
	Costs model.Costs
	// Calibration are the model's constants pruning predicts with
	// (default: model.DefaultParams; a live check fits them to its first
	// round when it prunes).
	Calibration *results.Calibration
	// Verbose keeps every pruned candidate's prediction in the Plan.
	Verbose bool
	// Runtimes are the runtimes measured after the algorithms (Runtimes:
	// openmp, openmpi, mpich); nil: every one found; empty: none.
	Runtimes []string

	// unhosted says which default counts prepare left out because this
	// process cannot host them (HostableThreads); "" when none.
	unhosted string
}

// Progress reports where a check is.
type Progress struct {
	Threads            int
	Set, Sets          int
	Round, Rounds      int
	Label              string
	Algorithms         int
	Done, Total        int // placements measured, planned
	Elapsed, Remaining time.Duration
	// Step, when set, is the whole report: a step after the placements
	// (the OpenMP runtimes' measurement), in words.
	Step string
}

// DefaultThreadCounts returns 2..n, all of them up to 8, then the powers
// of two and n itself: the thread counts a check measures unless told
// otherwise. Every other count is served by the nearest measured one
// (InferenceRule). With one CPU it returns 2: two threads sharing it, the
// oversubscribed regime a program there runs in.
func DefaultThreadCounts(n int) []int {
	if n < 2 {
		return []int{2}
	}
	var out []int
	for t := 2; t <= n; t++ {
		if t <= 8 || t&(t-1) == 0 || t == n {
			out = append(out, t)
		}
	}
	return out
}

// InferenceRule is written into every results file and plan: how a thread
// count the check did not measure is served. It is results.File.Nearest's
// rule, the one barriers.Auto and export use.
const InferenceRule = "a thread count not measured uses the entry of the nearest measured count (the larger on a tie): results.File.Nearest"

// ErrNothingMeasured is the error Run returns (wrapped, with ctx's error
// when there is one) when it measured no placement: a results file
// holding nothing must not replace a good one.
var ErrNothingMeasured = errors.New("nothing was measured")

// Run performs the check: plan, measure, select, assemble. When ctx is
// cancelled or the budget runs out it stops at the next sample and returns
// what was measured, with ctx's error (or nil when only the budget ran
// out); a file whose rounds were not all measured because ctx ended is
// marked partial. A check that finished its plan returns nil even when ctx
// ended just after. When no placement was measured it returns no file and
// an error wrapping ErrNothingMeasured.
func Run(ctx context.Context, cfg Config) (*results.File, error) {
	cfg, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	m := cfg.Measurer
	start := m.Now()
	f, prev, err := newFile(cfg, start)
	if err != nil {
		return nil, err
	}
	p, err := makePlan(cfg, prev)
	if err != nil {
		return nil, err
	}
	f.Cuts = append(f.Cuts, p.cuts...)
	if cfg.unhosted != "" {
		f.Cuts = append(f.Cuts, cfg.unhosted)
	}
	var load *sysload.Watch
	if !f.Simulated {
		load = sysload.Start(sysload.Proc{OnlyCPUs: allowedList(f.Machine.AllowedCPUs)}, loadInterval)
		defer func() {
			if load != nil {
				load.Stop()
			}
		}()
	}
	deadline := start.Add(cfg.Budget)
	outer := ctx // the OS-thread pass after the plan runs past the budget's deadline (a few ms a count)
	ctx, cancel := m.Bound(ctx, deadline)
	defer cancel()
	s, err := measurePlan(ctx, p, cfg, prev, deadline)
	if err != nil {
		return nil, err
	}
	recordLevelLatencies(ctx, f, cfg, s.floors)
	if d, ok := m.BlockWake(); ok {
		f.BlockWakeNs = float64(d)
	}
	if load != nil {
		f.Load = LoadRecord(load.Stop())
		load = nil
	}
	f, err = assemble(ctx, f, p, s, cfg.Budget)
	if err == nil {
		// The OS-thread pass has a grace of its own past the budget: a
		// pass of hundreds of OS threads takes seconds a count.
		octx, ocancel := m.Bound(outer, laterOf(m.Now(), deadline).Add(osThreadsGrace(cfg.Budget)))
		measureOSThreads(octx, f, m)
		ocancel()
	}
	// The runtimes' window: what the algorithms left of the budget;
	// OpenMP takes half of it when an MPI implementation is there to
	// measure, MPI the rest (and what OpenMP did not use).
	rtStart := m.Now()
	rtEnd := rtStart.Add(max(deadline.Sub(rtStart), 0))
	ompEnd, split := rtEnd, 1
	mpiThere := false
	for _, im := range mpiWanted(cfg, m) {
		mpiThere = mpiThere || im.Found()
	}
	if mpiThere && cfg.wants(RuntimeOpenMP) {
		ompEnd, split = rtStart.Add(rtEnd.Sub(rtStart)/2), 2
	}
	if cfg.wants(RuntimeOpenMP) {
		measureOpenMP(outer, f, cfg, m, ompEnd, split)
	}
	measureMPI(outer, f, cfg, m, rtEnd)
	annotate(f, s.notes)
	if f != nil && !f.Simulated && cfg.Calibration == nil {
		if m.Now().Before(deadline) {
			refit(cfg.Topology, p.kind, f) // every measurement, not only the first round's
		} else {
			// The fit models every candidate at every count: seconds at
			// hundreds of threads, which the budget no longer has.
			f.Cuts = append(f.Cuts, "the model was not fitted to every measurement: the budget had run out (the constants are the first round's, or the defaults)")
		}
	}
	return f, err
}

// osThreadsGrace is how long the OS-thread pass may run past the budget:
// a tenth of it, between 1 and 3 s.
func osThreadsGrace(budget time.Duration) time.Duration {
	return min(max(budget/10, time.Second), 3*time.Second)
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
