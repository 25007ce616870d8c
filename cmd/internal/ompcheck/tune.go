package ompcheck

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/pairs"
)

// Config says what Tune measures.
type Config struct {
	// Programs are the built loops, one per runtime.
	Programs []*Program
	// Threads are the thread counts.
	Threads []int
	// CPUs is how many CPUs the runs may use and CPUList which (a CPU
	// list such as "0-1"; Candidates' placement values).
	CPUs    int
	CPUList string
	// Seconds is each loop shape's timed span in one run (default 0.03
	// s), Warmup the untimed warm-up before them (default 0.02 s); Limit
	// the wall time after which a run is killed as hung (default the
	// run's time plus 5 s).
	Seconds, Warmup float64
	Limit           time.Duration
	// Verdict judges a setting's times against the defaults' (required).
	Verdict func(defaults, setting []float64) pairs.Verdict
	// BudgetFor turns the time a count would need into the budget a
	// user would ask for (pairs.Config.BudgetFor); nil names the time.
	BudgetFor func(need time.Duration) time.Duration
	// Progress, when set, is told where the search is, in words.
	Progress func(string)
	// Candidates lists the settings tried (default: Candidates).
	Candidates func(runtime string, threads int, cpus string, n int) []Setting
	// Now is the clock (default time.Now); the budget is ctx's deadline.
	Now func() time.Time
}

// Choice is what Tune found for one runtime at one thread count.
type Choice struct {
	Runtime string
	Threads int
	// Measured is false when no pair of runs was recorded (the budget
	// ran out before the count, or its defaults could not be timed); Why
	// says which (without a "not measured" of its own).
	Measured bool
	// Decided is false when the runs were too few to decide; Why then
	// says how many there were, how many are needed and the budget that
	// would give them (NeedBudget).
	Decided    bool
	NeedBudget time.Duration
	// DefaultNs and DefaultStencilNs are the medians of the defaults'
	// runs (the plain barrier loop's and the stencil's ns a barrier),
	// those paired with the chosen setting when one is chosen, else all.
	DefaultNs, DefaultStencilNs float64
	// Setting is the chosen setting, nil when the defaults stay; Ns and
	// StencilNs its medians, MarginPct and Test the verdict that chose
	// it.
	Setting       Setting
	Ns, StencilNs float64
	MarginPct     float64
	Test          string
	// Why says why the defaults stay, or why the chosen setting is not
	// the fastest measured.
	Why string
	// Failed are the settings that crashed, hung or were rejected, each
	// with what happened.
	Failed []string
	// Settings is how many settings were timed, Pairs the most pairs any
	// of them got, Runs how many runs of the loops the count took, and
	// Unsteady how many pairs were dropped because a run stayed in
	// transition.
	Settings, Pairs, Runs, Unsteady int
}

// Tune times, for each thread count and each program's runtime, the
// runtime's defaults against the runtime's candidate settings on both
// loop shapes (the plain barrier loop, the primary measure, and the
// stencil, which a chosen setting must not slow), with pairs.Compare:
// every run checked for steady state and rerun when in transition,
// paired with the defaults, decided on enough pairs, confirmed in fresh
// pairs.
//
// The counts are measured from the largest down (where threads
// outnumber the CPUs the runtimes' waiting costs the most), the runtimes
// in turn. Each count and runtime gets the larger of an even share of
// the time left and the time a decision needs at the cost of a pair
// measured so far: with a budget too small for every count, the first
// are decided and the rest say "not decided" with the budget that would
// decide them, rather than every count deciding on too few runs.
func Tune(ctx context.Context, cfg Config) []Choice {
	cfg = withDefaults(cfg)
	counts := slices.Clone(cfg.Threads)
	slices.Sort(counts)
	slices.Reverse(counts)
	var out []Choice
	var pairCost time.Duration // measured: the mean time of a pair
	var pairsRun int
	var spent time.Duration
	cells := len(counts) * len(cfg.Programs)
	for _, n := range counts {
		for _, p := range cfg.Programs {
			cands := cfg.Candidates(p.Runtime, n, cfg.CPUList, cfg.CPUs)
			left := remaining(ctx, cfg.Now)
			cost := pairCost
			if cost == 0 {
				cost = cfg.runCost() * 2
			}
			share := cellShare(left, cells, cost, len(cands))
			cells--
			cctx, cancel := context.WithDeadline(ctx, cfg.Now().Add(share))
			start := cfg.Now()
			ch, npairs := cfg.measure(cctx, p, n, cands)
			cancel()
			if npairs > 0 {
				spent += cfg.Now().Sub(start)
				pairsRun += npairs
				pairCost = spent / time.Duration(pairsRun)
			}
			out = append(out, ch)
		}
	}
	// Report in the order asked, runtimes in the programs' order.
	slices.SortStableFunc(out, func(a, b Choice) int {
		return slices.Index(cfg.Threads, a.Threads) - slices.Index(cfg.Threads, b.Threads)
	})
	return out
}

// cellShare is the time one count of one runtime may take of left, with
// cells (this one included) still to measure, pairCost the time of a pair
// of runs and cands candidates: an even split of what is left, or, where
// that is less, what a decision takes (cellNeed) when left holds it. What
// a cell does not use flows on to the next. With less, pairs.Compare
// narrows to the fastest after 2 pairs of each, and 2 pairs of
// oversubscribed threads picked the weaker of two settings with --budget
// 20s; with the minimum alone (no room for a pair beyond it), a setting
// 1.6 times faster ran out of time in its confirmation
// (docs/lab/2026-12-07-acceptance-3.md). The largest counts, measured
// first, are decided on enough pairs, and a budget too small for the
// rest says so.
func cellShare(left time.Duration, cells int, pairCost time.Duration, cands int) time.Duration {
	return max(left/time.Duration(max(cells, 1)), min(cellNeed(pairCost, cands), left))
}

// cellNeed is the time a decision among cands candidates takes at
// pairCost a pair: the pairs every candidate must have before it is
// judged (pairs.DefaultMinPairs), the pairs that confirm the choice
// (pairs.DefaultConfirmPairs), and as much again for what a comparison
// adds when the test cannot yet separate two settings (more pairs, runs
// in transition rerun).
func cellNeed(pairCost time.Duration, cands int) time.Duration {
	return 2 * pairCost * time.Duration(pairs.DefaultMinPairs*cands+pairs.DefaultConfirmPairs)
}

func withDefaults(cfg Config) Config {
	if cfg.Verdict == nil {
		panic("ompcheck: Config.Verdict is nil")
	}
	if cfg.Seconds <= 0 {
		cfg.Seconds = 0.03
	}
	if cfg.Warmup <= 0 {
		cfg.Warmup = 0.02
	}
	if cfg.Limit <= 0 {
		cfg.Limit = cfg.runCost() + 5*time.Second
	}
	if cfg.Candidates == nil {
		cfg.Candidates = Candidates
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Progress == nil {
		cfg.Progress = func(string) {}
	}
	return cfg
}

// runCost is a run's loops and warm-up, plus a process's start.
func (cfg Config) runCost() time.Duration {
	return time.Duration((2*cfg.Seconds+cfg.Warmup)*float64(time.Second)) + 10*time.Millisecond
}

// remaining is the time to ctx's deadline (an hour without one).
func remaining(ctx context.Context, now func() time.Time) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return time.Hour
	}
	return max(d.Sub(now()), 0)
}

// measure compares the runtime's candidates with its defaults at n
// threads; it returns the choice and the pairs it ran.
func (cfg Config) measure(ctx context.Context, p *Program, n int, cands []Setting) (Choice, int) {
	names := make([]string, len(cands))
	for i, c := range cands {
		names[i] = c.String()
	}
	run := func(ctx context.Context, setting string) (pairs.Sample, error) {
		t, err := p.Run(ctx, Sample{Threads: n, Seconds: cfg.Seconds, Warmup: cfg.Warmup, Env: ParseSetting(setting), Limit: cfg.Limit})
		if err != nil {
			return nil, err
		}
		if err := t.Steady(); err != nil {
			return nil, err
		}
		return pairs.Sample{t.NsPerBarrier(), t.StencilNs()}, nil
	}
	r := pairs.Compare(ctx, pairs.Config{
		Candidates: names, Run: run, Verdict: cfg.Verdict, BudgetFor: cfg.BudgetFor, Now: cfg.Now,
		Progress: func(s string) {
			cfg.Progress(fmt.Sprintf("OpenMP %s, %d threads: %s, about %s left", p.Runtime, n, s, remaining(ctx, cfg.Now).Round(time.Second)))
		},
	})
	return choiceOf(p.Runtime, n, r), len(r.DefaultTimes)
}

// choiceOf turns a comparison into the count's choice.
func choiceOf(runtime string, n int, r pairs.Result) Choice {
	ch := Choice{Runtime: runtime, Threads: n, Runs: r.Runs, Decided: r.Decided, NeedBudget: r.Need, Why: r.Why}
	for _, o := range r.Outcomes {
		if o.Failed != "" {
			ch.Failed = append(ch.Failed, o.Setting+": "+o.Failed)
		}
		if o.Pairs() > 0 {
			ch.Settings++
		}
		ch.Pairs = max(ch.Pairs, o.Pairs())
		ch.Unsteady += o.Unsteady
	}
	if len(r.DefaultTimes) == 0 {
		ch.Decided = false
		switch {
		case strings.HasPrefix(ch.Why, "not decided: the defaults' run failed"):
			ch.Why = strings.TrimPrefix(ch.Why, "not decided: ")
		case ch.Unsteady > 0:
			ch.Why = fmt.Sprintf("the OpenMP share of the budget ran out before a pair of steady runs (%d pairs dropped in transition); the count needs %d pairs or more", ch.Unsteady, pairs.DefaultMinPairs)
		default:
			ch.Why = fmt.Sprintf("the OpenMP share of the budget ran out before a pair of runs; the count needs %d pairs or more", pairs.DefaultMinPairs)
		}
		return ch
	}
	ch.Measured = true
	if o := r.Chosen; o != nil {
		ch.Setting = ParseSetting(o.Setting)
		xs, ds := o.Times(0)
		ch.Ns, ch.DefaultNs = pairs.Median(xs), pairs.Median(ds)
		xs, ds = o.Times(1)
		ch.StencilNs, ch.DefaultStencilNs = pairs.Median(xs), pairs.Median(ds)
		ch.MarginPct, ch.Test = r.Verdict.MarginPct, r.Verdict.Test
		return ch
	}
	var d0, d1 []float64
	for _, d := range r.DefaultTimes {
		d0, d1 = append(d0, d[0]), append(d1, d[1])
	}
	ch.DefaultNs, ch.DefaultStencilNs = pairs.Median(d0), pairs.Median(d1)
	return ch
}

// Describe is the choice in one line, for a progress or a report.
func (c Choice) Describe() string {
	if !c.Measured {
		return fmt.Sprintf("%s %d threads: not measured: %s", c.Runtime, c.Threads, c.Why)
	}
	if c.Setting == nil {
		return fmt.Sprintf("%s %d threads: defaults %.0f ns; %s", c.Runtime, c.Threads, c.DefaultNs, c.Why)
	}
	return strings.TrimSpace(fmt.Sprintf("%s %d threads: %s %.0f ns against the defaults' %.0f ns (%+.1f%%, %s)", c.Runtime, c.Threads, c.Setting, c.Ns, c.DefaultNs, c.MarginPct, c.Test))
}
