// Package check is the install-time check: it times every barrier
// algorithm on representative placements of every chosen thread count,
// measures the core-to-core floor at each level of the CPU tree, and picks
// the winners, within a time budget. The outcome is a results.File.
//
// Run is four steps, one file each: plan (plan.go: validate the Config,
// choose placements and samples to fit the budget), measure (measure.go:
// the floors and every candidate on every placement, in rounds), select
// (select.go: the winner and the robust choice of each thread count) and
// assemble (write.go: the results.File, what is partial and what was cut).
// The hybrid is measured like the flat algorithms, composed for each
// placement from the tree and the measured floors (hybrid_candidate.go);
// its composition and level keys are recorded with its measurements and,
// when it wins, in the winner, so that barriers.Auto builds the same
// barrier.
package check

import (
	"context"
	"errors"
	"time"

	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

// Defaults.
const (
	// DefaultBudget fits about a minute on a small machine.
	DefaultBudget = 60 * time.Second
	// DefaultSamples is the samples per candidate before budget cuts.
	DefaultSamples = 31
	// MinSamples is the fewest samples per candidate budget cuts leave.
	MinSamples = 9
	// TieFraction: winners within 3% of the best are tied; the simpler
	// algorithm (catalog order) wins.
	TieFraction = 0.03
	// DropFactor drops a candidate once it is twice as slow as the best.
	DropFactor = 2.0
	// MaxThreads is the largest thread count accepted (or 4 per PU on
	// bigger machines).
	MaxThreads = 4096
	// MaxRounds bounds the passes over every placement when the budget
	// leaves room.
	MaxRounds = 10
)

// Config describes a check. Zero values take the defaults.
type Config struct {
	// Topology is the tree to place threads on (the live one for a real
	// check).
	Topology *hwtree.Topology
	// Threads are the thread counts; default DefaultThreadCounts.
	Threads []int
	// SetsLimit is the most placements per thread count (default
	// configsets.DefaultLimit).
	SetsLimit int
	// Algorithms filters the catalog (default: all).
	Algorithms []string
	// Budget bounds the whole check (default DefaultBudget).
	Budget time.Duration
	// SampleTarget is the duration of one sample (default 200µs).
	SampleTarget time.Duration
	// Progress, when set, is called before each placement is measured.
	Progress func(Progress)
	// Resume continues a partial file: its complete thread counts and its
	// floors are kept.
	Resume *results.File
	// Version is the tool version written into the file.
	Version string
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
}

// DefaultThreadCounts returns 2..n, all of them up to 8, then the powers
// of two and n itself.
func DefaultThreadCounts(n int) []int {
	var out []int
	for t := 2; t <= n; t++ {
		if t <= 8 || t&(t-1) == 0 || t == n {
			out = append(out, t)
		}
	}
	return out
}

// ErrNothingMeasured is the error Run returns (wrapped, with ctx's error
// when there is one) when it measured no placement: a results file
// holding nothing must not replace a good one.
var ErrNothingMeasured = errors.New("nothing was measured")

// Run performs the check. When ctx is cancelled or the budget runs out it
// stops at the next sample and returns what was measured, marked partial,
// with ctx's error (or nil when only the budget ran out). A check that
// finished its plan returns nil even when ctx ended just after. When no
// placement was measured it returns no file and an error wrapping
// ErrNothingMeasured.
func Run(ctx context.Context, cfg Config) (*results.File, error) {
	start := time.Now()
	cfg, algs, threads, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	f, done, err := newFile(cfg, start)
	if err != nil {
		return nil, err
	}
	p, err := makePlan(cfg.Topology, threads, done, cfg, len(algs), len(f.Floor) == 0)
	if err != nil {
		return nil, err
	}
	f.Cuts = append(f.Cuts, p.cuts...)
	ctx, cancel := context.WithDeadline(ctx, start.Add(cfg.Budget))
	defer cancel()
	s, err := measurePlan(ctx, p, cfg, algs, start)
	if err != nil {
		return nil, err
	}
	recordLevelLatencies(ctx, f, cfg, s.floors)
	recordBlockWake(f)
	f, err = assemble(ctx, f, p, s, cfg.Budget)
	annotate(f, s.notes)
	return f, err
}
