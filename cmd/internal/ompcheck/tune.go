package ompcheck

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"
)

// Verdict is the caller's judgement of a setting's samples against the
// defaults' samples paired with them.
type Verdict struct {
	// Faster: the setting is faster than the defaults by the caller's
	// margin and test.
	Faster bool
	// MarginPct is how much slower the defaults' median is than the
	// setting's, in percent (negative: the setting is slower).
	MarginPct float64
	// Test says what separated them, or why they were not separated.
	Test string
}

// Config says what Tune measures.
type Config struct {
	// Programs are the built loops, one per runtime.
	Programs []*Program
	// Threads are the thread counts, in the order measured.
	Threads []int
	// CPUs is how many CPUs the runs may use (Candidates' spare test).
	CPUs int
	// Seconds is one run's loop (default 0.015 s); Limit the wall time
	// after which a run is killed as hung (default Seconds + 5 s).
	Seconds float64
	Limit   time.Duration
	// Faster judges a setting's samples against the defaults' (required).
	Faster func(defaults, setting []float64) Verdict
	// Progress, when set, is told where the search is, in words.
	Progress func(string)
	// Candidates lists the settings tried (default: Candidates).
	Candidates func(runtime string, threads, cpus int) []Candidate
	// CoarsePairs, RefinePairs and ConfirmPairs are the pairs per setting
	// of each pass (defaults 2, 6 and 3); Leaders how many single
	// settings the refinement keeps (default 3).
	CoarsePairs, RefinePairs, ConfirmPairs, Leaders int
	// Now is the clock (default time.Now); the budget is ctx's deadline.
	Now func() time.Time
	// AllRuntimes is how many runtimes a program here may link (default
	// len(Toolchains())): with fewer Programs, a runtime was not
	// measured, and no variable both runtimes read is chosen.
	AllRuntimes int
}

// Choice is what Tune found for one runtime at one thread count.
type Choice struct {
	Runtime string
	Threads int
	// Measured is false when the count was not reached (the budget ran
	// out) or its defaults could not be timed; Why says which.
	Measured bool
	// DefaultNs is the median of the defaults' runs paired with the chosen
	// setting, or of every run of the defaults when none was chosen.
	DefaultNs float64
	// Setting is the chosen setting, nil when the defaults stay; Ns its
	// median, MarginPct and Test the verdict that chose it.
	Setting   Setting
	Ns        float64
	MarginPct float64
	Test      string
	// Why says why the defaults stay, or why the chosen setting is not
	// the fastest measured (both runtimes must agree on the variables
	// they share).
	Why string
	// Failed are the settings that crashed, hung or were rejected, each
	// with what happened.
	Failed []string
	// Settings is how many settings were timed and Runs how many runs of
	// the loop the count took.
	Settings, Runs int
}

// measured is one setting's runs: Defaults[i] ran beside Samples[i].
type measured struct {
	Candidate
	samples, defaults []float64
	failed            string
	refined           bool
}

func (m *measured) ratio() float64 {
	r := make([]float64, len(m.samples))
	for i := range m.samples {
		r[i] = m.samples[i] / m.defaults[i]
	}
	return median(r)
}

// cell is the search for one runtime at one count.
type cell struct {
	p       *Program
	threads int
	all     []*measured
	runs    int
	dead    string // the defaults themselves failed
}

// errDefaults wraps a failure of the defaults' own run.
var errDefaults = errors.New("the defaults' run failed")

// Tune times, for each thread count and each program's runtime, the
// runtime's defaults against the candidate settings, every setting's run
// paired with a run of the defaults in the same round (in a random order
// within the pair), the settings in a shuffled order each round:
//
//  1. a coarse pass of CoarsePairs pairs for every candidate;
//  2. a refinement of RefinePairs pairs for the Leaders fastest single
//     settings and the combinations of the best of each family (wait and
//     pattern; the best of those with each placement), as many of them,
//     fastest first, as the count's share of the budget gives
//     minRefinePairs pairs each (the coarse pass's later rounds only while
//     they fit in 40% of the share);
//  3. the settings Faster than the defaults are ranked; where both
//     runtimes were measured, they must agree on the variables both read
//     (OMP_PLACES, OMP_PROC_BIND, OMP_WAIT_POLICY): a runtime's fastest
//     setting of such variables is measured for the other runtime too
//     (added to its fastest setting of its own variables), and where a
//     runtime was not measured, none of those is chosen;
//  4. each chosen setting is confirmed with ConfirmPairs fresh pairs: it
//     stays only when it is still Faster on every pair pooled and faster
//     than the defaults in most fresh pairs.
//
// The budget is ctx's deadline, shared evenly by the counts and runtimes
// not yet measured. A count the budget did not reach has Measured false.
func Tune(ctx context.Context, cfg Config) []Choice {
	cfg = withDefaults(cfg)
	var out []Choice
	for ci, n := range cfg.Threads {
		cells := make([]*cell, 0, len(cfg.Programs))
		for pi, p := range cfg.Programs {
			c := &cell{p: p, threads: n}
			left := (len(cfg.Threads)-ci)*len(cfg.Programs) - pi
			// A fifth of the cell's share is left for the confirmation.
			cellEnd := cfg.Now().Add(remaining(ctx, cfg.Now) * 4 / 5 / time.Duration(left))
			cfg.search(ctx, c, cellEnd)
			cells = append(cells, c)
		}
		out = append(out, cfg.choose(ctx, cells)...)
	}
	return out
}

func withDefaults(cfg Config) Config {
	if cfg.Faster == nil {
		panic("ompcheck: Config.Faster is nil")
	}
	if cfg.Seconds <= 0 {
		cfg.Seconds = 0.015
	}
	if cfg.Limit <= 0 {
		cfg.Limit = time.Duration(cfg.Seconds*float64(time.Second)) + 5*time.Second
	}
	if cfg.Candidates == nil {
		cfg.Candidates = Candidates
	}
	if cfg.CoarsePairs <= 0 {
		cfg.CoarsePairs = 2
	}
	if cfg.RefinePairs <= 0 {
		cfg.RefinePairs = 6
	}
	if cfg.ConfirmPairs <= 0 {
		cfg.ConfirmPairs = 3
	}
	if cfg.Leaders <= 0 {
		cfg.Leaders = 3
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.AllRuntimes <= 0 {
		cfg.AllRuntimes = len(Toolchains())
	}
	if cfg.Progress == nil {
		cfg.Progress = func(string) {}
	}
	return cfg
}

// remaining is the time to ctx's deadline (an hour without one).
func remaining(ctx context.Context, now func() time.Time) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return time.Hour
	}
	return max(d.Sub(now()), 0)
}

// pair runs the defaults and s once each, in a random order, and records
// both. A failure of s marks it failed; a failure of the defaults returns
// an error wrapping errDefaults.
func (cfg Config) pair(ctx context.Context, c *cell, m *measured) error {
	sample := func(env Setting) (float64, error) {
		c.runs++
		t, err := c.p.Run(ctx, Sample{Threads: c.threads, Seconds: cfg.Seconds, Env: env, Limit: cfg.Limit})
		return t.NsPerBarrier, err
	}
	var d, s float64
	var derr, serr error
	if rand.IntN(2) == 0 {
		d, derr = sample(nil)
		if derr == nil {
			s, serr = sample(m.Setting)
		}
	} else {
		s, serr = sample(m.Setting)
		d, derr = sample(nil)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if derr != nil {
		return fmt.Errorf("%w: %v", errDefaults, derr)
	}
	if serr != nil {
		m.failed = serr.Error()
		return nil
	}
	m.samples = append(m.samples, s)
	m.defaults = append(m.defaults, d)
	return nil
}

// search runs the coarse pass and the refinement of one cell until end.
func (cfg Config) search(ctx context.Context, c *cell, end time.Time) {
	for _, cand := range cfg.Candidates(c.p.Runtime, c.threads, cfg.CPUs) {
		c.all = append(c.all, &measured{Candidate: cand})
	}
	start := cfg.Now()
	pairs := 0
	// rounds times set n times over; a round after the first stops at
	// stop (the coarse pass) and every one at end. It reports false when
	// the search must end (ctx, or the defaults failed).
	rounds := func(pass string, set []*measured, n int, stop time.Time) bool {
		order := slices.Clone(set)
		for r := 0; r < n; r++ {
			rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			for k, m := range order {
				if m.failed != "" {
					continue
				}
				if ctx.Err() != nil {
					return false
				}
				if (r > 0 || pass != "coarse") && cfg.Now().After(stop) {
					return true
				}
				cfg.Progress(fmt.Sprintf("OpenMP %s, %d threads: %s pass, round %d/%d, setting %d/%d, about %s left", c.p.Runtime, c.threads, pass, r+1, n, k+1, len(order), remaining(ctx, cfg.Now).Round(time.Second)))
				if err := cfg.pair(ctx, c, m); err != nil {
					if errors.Is(err, errDefaults) {
						c.dead = err.Error()
					}
					return false
				}
				pairs++
			}
		}
		return true
	}
	// The coarse pass's later rounds take at most 40% of the cell's time.
	if !rounds("coarse", c.all, cfg.CoarsePairs, start.Add(end.Sub(start)*2/5)) || c.dead != "" {
		return
	}
	refine := cfg.leaders(c)
	// Refine no more settings than the time left gives minRefinePairs
	// pairs each (at least one setting), the fastest first.
	if pairs > 0 {
		cost := cfg.Now().Sub(start) / time.Duration(pairs)
		if afford := int(end.Sub(cfg.Now()) / max(cost, time.Microsecond) / minRefinePairs); afford < len(refine) {
			refine = refine[:max(afford, 1)]
		}
	}
	for _, m := range refine {
		m.refined = true
	}
	rounds("refine", refine, cfg.RefinePairs, end)
}

// minRefinePairs is the fewest pairs a refined setting should get: fewer
// cannot pass a Mann-Whitney U test at 0.05 (4 against 4 can).
const minRefinePairs = 4

// leaders are the settings the refinement times: the Leaders fastest
// single settings faster than the defaults in the coarse pass, the best
// wait setting with the best pattern, and the best setting that is not a
// placement with each placement.
func (cfg Config) leaders(c *cell) []*measured {
	var ok []*measured
	for _, m := range c.all {
		if m.failed == "" && len(m.samples) > 0 {
			ok = append(ok, m)
		}
	}
	sort.SliceStable(ok, func(i, j int) bool { return ok[i].ratio() < ok[j].ratio() })
	var out []*measured
	have := func(s Setting) bool {
		return slices.ContainsFunc(out, func(m *measured) bool { return slices.Equal(m.Setting, s) })
	}
	for _, m := range ok {
		if len(out) < cfg.Leaders && m.ratio() < 1 {
			out = append(out, m)
		}
	}
	best := map[string]*measured{}
	for _, m := range ok {
		if best[m.Family] == nil && m.ratio() < 1 {
			best[m.Family] = m
		}
	}
	combine := func(a, b Setting) {
		s := Union(a, b)
		if !have(s) {
			out = append(out, &measured{Candidate: Candidate{Setting: s, Family: "combined"}})
		}
	}
	var core Setting // the best setting that is not a placement
	if w, p := best[FamilyWait], best[FamilyPattern]; w != nil && p != nil {
		combine(w.Setting, p.Setting)
	}
	for _, m := range ok {
		if m.Family != FamilyPlaces && m.ratio() < 1 {
			core = m.Setting
			break
		}
	}
	if core != nil {
		for _, m := range c.all {
			if m.Family == FamilyPlaces && m.failed == "" {
				combine(core, m.Setting)
			}
		}
	}
	return out
}

// option is a refined setting that the verdict found faster.
type option struct {
	m       *measured
	verdict Verdict
}

// choose picks each cell's setting (step 3 of Tune) and confirms it (step
// 4).
func (cfg Config) choose(ctx context.Context, cells []*cell) []Choice {
	out := make([]Choice, len(cells))
	opts := make([][]option, len(cells))
	allMeasured := len(cells) >= cfg.AllRuntimes
	for i, c := range cells {
		ch := &out[i]
		*ch = Choice{Runtime: c.p.Runtime, Threads: c.threads, Runs: c.runs}
		var defs []float64
		for _, m := range c.all {
			defs = append(defs, m.defaults...)
			if m.failed != "" {
				ch.Failed = append(ch.Failed, m.Setting.String()+": "+m.failed)
			}
			if len(m.samples) > 0 {
				ch.Settings++
			}
			if m.refined && m.failed == "" && len(m.samples) > 0 {
				if v := cfg.Faster(m.defaults, m.samples); v.Faster {
					opts[i] = append(opts[i], option{m, v})
				}
			}
		}
		switch {
		case c.dead != "":
			ch.Why = "not measured: " + c.dead
			allMeasured = false
			continue
		case len(defs) == 0:
			ch.Why = "not measured: the OpenMP share of the budget ran out"
			allMeasured = false
			continue
		}
		ch.Measured, ch.DefaultNs = true, median(defs)
		sort.SliceStable(opts[i], func(a, b int) bool { return opts[i][a].m.ratio() < opts[i][b].m.ratio() })
	}
	if allMeasured {
		cfg.crossMeasure(ctx, cells, opts, out)
	}
	picks := agree(opts, allMeasured, false)
	if cfg.settle(ctx, cells, opts, picks, out) {
		// A shared variable that did not hold for one runtime is set for
		// neither: choose again without shared variables.
		cfg.settle(ctx, cells, opts, agree(opts, allMeasured, true), out)
	}
	for i, c := range cells {
		out[i].Runs = c.runs
	}
	return out
}

// crossMeasure measures, for each runtime whose fastest option that sets
// a variable both runtimes read (part) has no counterpart in another
// runtime's options, that other runtime under its fastest option that
// sets none, with part added, for RefinePairs pairs; when that is faster
// than its defaults it becomes one of its options, so that agree can set
// part for both, measured for both.
func (cfg Config) crossMeasure(ctx context.Context, cells []*cell, opts [][]option, out []Choice) {
	hasPart := func(os []option, part Setting) bool {
		return slices.ContainsFunc(os, func(o option) bool { return slices.Equal(o.m.Setting.Shared(), part) })
	}
	for i := range cells {
		var part Setting
		for _, o := range opts[i] {
			if sh := o.m.Setting.Shared(); len(sh) > 0 {
				part = sh
				break
			}
		}
		if part == nil {
			continue
		}
		for j, c := range cells {
			if j == i || !out[j].Measured || hasPart(opts[j], part) || ctx.Err() != nil {
				continue
			}
			var base Setting
			for _, o := range opts[j] {
				if len(o.m.Setting.Shared()) == 0 {
					base = o.m.Setting
					break
				}
			}
			s := Union(base, part)
			var m *measured
			for _, x := range c.all {
				if slices.Equal(x.Setting, s) {
					m = x
				}
			}
			if m == nil {
				m = &measured{Candidate: Candidate{Setting: s, Family: "combined"}}
				c.all = append(c.all, m)
			}
			if m.failed != "" {
				continue
			}
			m.refined = true
			for k := 0; k < cfg.RefinePairs; k++ {
				cfg.Progress(fmt.Sprintf("OpenMP %s, %d threads: %s, as the other runtime's fastest sets %s, pair %d/%d", c.p.Runtime, c.threads, s, part, k+1, cfg.RefinePairs))
				if err := cfg.pair(ctx, c, m); err != nil || m.failed != "" {
					break
				}
			}
			if len(m.samples) > 0 && m.failed == "" {
				if v := cfg.Faster(m.defaults, m.samples); v.Faster {
					opts[j] = append(opts[j], option{m, v})
					sort.SliceStable(opts[j], func(a, b int) bool { return opts[j][a].m.ratio() < opts[j][b].m.ratio() })
				}
			}
		}
	}
}

// settle confirms each measured cell's pick and fills its choice; it
// reports whether a pick that sets a shared variable did not hold.
func (cfg Config) settle(ctx context.Context, cells []*cell, opts [][]option, picks []*option, out []Choice) (sharedFailed bool) {
	for i, c := range cells {
		if !out[i].Measured {
			continue
		}
		o := picks[i]
		out[i].Setting, out[i].Ns, out[i].MarginPct, out[i].Test, out[i].Why = nil, 0, 0, "", ""
		if o == nil {
			out[i].Why = whyDefaults(cfg, c, opts[i])
			continue
		}
		if !cfg.confirm(ctx, c, o) {
			out[i].Why = fmt.Sprintf("%s was faster than the defaults (%+.1f%%) but did not hold in %d fresh pairs (faster in most of them, and by the margin and the test on every pair pooled): the defaults stay", o.m.Setting, o.verdict.MarginPct, cfg.ConfirmPairs)
			sharedFailed = sharedFailed || len(o.m.Setting.Shared()) > 0
			continue
		}
		v := cfg.Faster(o.m.defaults, o.m.samples)
		out[i].Setting, out[i].Ns, out[i].MarginPct, out[i].Test = o.m.Setting, median(o.m.samples), v.MarginPct, v.Test
		out[i].DefaultNs = median(o.m.defaults) // the runs paired with it, which the margin compares
		if len(opts[i]) > 0 && opts[i][0].m != o.m {
			out[i].Why = fmt.Sprintf("the fastest, %s, sets a variable both runtimes read, and the runtimes' measurements did not agree on it: this is the fastest that keeps them consistent", opts[i][0].m.Setting)
		}
	}
	return sharedFailed
}

// whyDefaults says why a measured cell keeps the defaults.
func whyDefaults(cfg Config, c *cell, opts []option) string {
	if len(opts) > 0 {
		return fmt.Sprintf("%s was faster (%+.1f%%), but it sets a variable both runtimes read and the other runtime did not agree (or was not measured): nothing is set", opts[0].m.Setting, opts[0].verdict.MarginPct)
	}
	var best *measured
	for _, m := range c.all {
		if m.failed == "" && len(m.samples) > 0 && (best == nil || median(m.samples) < median(best.samples)) {
			best = m
		}
	}
	if best == nil {
		return "no setting finished a run: the defaults stay"
	}
	v := cfg.Faster(best.defaults, best.samples)
	return fmt.Sprintf("no setting was faster than the defaults by the margin and the test (the fastest, %s, %+.1f%%: %s): the defaults stay", best.Setting, v.MarginPct, v.Test)
}

// confirm times o ConfirmPairs more times beside the defaults: it holds
// when it is faster in most fresh pairs and still Faster on all its pairs.
func (cfg Config) confirm(ctx context.Context, c *cell, o *option) bool {
	before := len(o.m.samples)
	for k := 0; k < cfg.ConfirmPairs; k++ {
		cfg.Progress(fmt.Sprintf("OpenMP %s, %d threads: confirming %s, pair %d/%d", c.p.Runtime, c.threads, o.m.Setting, k+1, cfg.ConfirmPairs))
		if err := cfg.pair(ctx, c, o.m); err != nil || o.m.failed != "" {
			return false
		}
	}
	faster := 0
	for i := before; i < len(o.m.samples); i++ {
		if o.m.samples[i] < o.m.defaults[i] {
			faster++
		}
	}
	return 2*faster > cfg.ConfirmPairs && cfg.Faster(o.m.defaults, o.m.samples).Faster
}

// agree picks one option per cell (nil: the defaults) so that the
// variables both runtimes read are the same in every pick: with every
// runtime measured, the shared part that makes the runtimes fastest
// together (the sum of the logarithms of their median ratios) among
// those each runtime has an option for, or none; with a runtime not
// measured (or ownOnly), no shared variable at all.
func agree(opts [][]option, allMeasured, ownOnly bool) []*option {
	parts := []Setting{nil}
	if allMeasured && !ownOnly {
		for _, os := range opts {
			for _, o := range os {
				if sh := o.m.Setting.Shared(); len(sh) > 0 && !slices.ContainsFunc(parts, func(p Setting) bool { return slices.Equal(p, sh) }) {
					parts = append(parts, sh)
				}
			}
		}
	}
	var best []*option
	bestScore := math.Inf(1)
	for _, part := range parts {
		picks := make([]*option, len(opts))
		score, ok := 0.0, true
		for i := range opts {
			for k := range opts[i] {
				if slices.Equal(opts[i][k].m.Setting.Shared(), part) {
					picks[i] = &opts[i][k]
					break
				}
			}
			switch {
			case picks[i] != nil:
				score += math.Log(picks[i].m.ratio())
			case len(part) > 0:
				ok = false
			}
		}
		if ok && score < bestScore {
			best, bestScore = picks, score
		}
	}
	if best == nil {
		best = make([]*option, len(opts))
	}
	return best
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Describe is the choice in one line, for a progress or a report.
func (c Choice) Describe() string {
	if !c.Measured {
		return fmt.Sprintf("%s %d threads: %s", c.Runtime, c.Threads, c.Why)
	}
	if c.Setting == nil {
		return fmt.Sprintf("%s %d threads: defaults %.0f ns; %s", c.Runtime, c.Threads, c.DefaultNs, c.Why)
	}
	return strings.TrimSpace(fmt.Sprintf("%s %d threads: %s %.0f ns against the defaults' %.0f ns (%+.1f%%, %s)", c.Runtime, c.Threads, c.Setting, c.Ns, c.DefaultNs, c.MarginPct, c.Test))
}
