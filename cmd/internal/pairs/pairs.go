// Package pairs compares candidate settings of a runtime against its
// defaults by timing real runs, in a way a user can believe: every run is
// checked for steady state (Steady), every candidate's run is paired with
// a run of the defaults in the same round (in a random order within the
// pair, the candidates shuffled each round), nothing is decided on fewer
// than MinPairs pairs of each, a chosen setting is confirmed in fresh
// pairs, and a setting whose run crashed, hung or was refused is recorded
// and never chosen. The runs fit in ctx's deadline (Compare).
//
// What a run is (a process with some environment, a loop of some shape)
// and how two sets of times are judged (a margin and a significance test)
// are the caller's: Config.Run and Config.Verdict.
package pairs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// ErrUnsteady says that a run was still in transition (Steady): the run
// is not recorded, and Compare runs it again.
var ErrUnsteady = errors.New("run not in steady state")

// Steady checks one run's chunk times (the run's timed span cut in equal
// chunks, each chunk's time per operation, in order) for steady state.
// A run is in transition, and Steady returns an error wrapping
// ErrUnsteady, when its first chunk is more than 3 times the median of
// the others (the run's start was timed), or when the median of its first
// third and that of its last third differ by more than a factor of 2 (a
// trend: the runtime or the kernel was still settling). One chunk hit by
// a lost time slice is not a transition: the median of the chunks ignores
// it. It needs at least 3 chunks, all positive and finite.
func Steady(chunks []float64) error {
	if len(chunks) < 3 {
		return fmt.Errorf("%d chunk times, want at least 3", len(chunks))
	}
	for i, c := range chunks {
		if !(c > 0) || math.IsInf(c, 0) {
			return fmt.Errorf("chunk %d's time %g is not a positive number", i+1, c)
		}
	}
	if rest := Median(chunks[1:]); chunks[0] > 3*rest {
		return fmt.Errorf("%w: the first chunk took %.3g, more than 3 times the others' median %.3g", ErrUnsteady, chunks[0], rest)
	}
	k := len(chunks) / 3
	first, last := Median(chunks[:k]), Median(chunks[len(chunks)-k:])
	if first > 2*last || last > 2*first {
		return fmt.Errorf("%w: the first third's median %.3g and the last third's %.3g differ by more than 2x", ErrUnsteady, first, last)
	}
	return nil
}

// Median is the median of v (0 when empty); v is not changed.
func Median(v []float64) float64 {
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

// Sample is what one run measured: one time per measure (say, per loop
// shape the run times), the first the primary one; lower is faster.
type Sample []float64

// Verdict is the caller's judgement of a setting's times against the
// defaults' times paired with them, on one measure.
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

// Config says what Compare runs and how it judges.
type Config struct {
	// Candidates name the settings compared with the defaults (none
	// empty, no two the same).
	Candidates []string
	// Run runs the loop once under a setting ("" is the defaults) and
	// returns what it measured, with as many measures in every run. An
	// error wrapping ErrUnsteady makes Compare run it again (Retries
	// times at most); any other error of a candidate's run marks the
	// candidate failed; one of the defaults' run ends the comparison.
	Run func(ctx context.Context, setting string) (Sample, error)
	// Verdict judges a setting's times against the defaults' (required).
	Verdict func(defaults, setting []float64) Verdict
	// MinPairs is the fewest pairs of a candidate a decision needs
	// (default 4: fewer cannot pass a Mann-Whitney U test at 0.05);
	// MaxPairs the most (default 8); ConfirmPairs the fresh pairs a
	// chosen candidate must hold in (default 3); Retries the reruns of a
	// run not in steady state (default 2).
	MinPairs, MaxPairs, ConfirmPairs, Retries int
	// BudgetFor, when set, turns the time a decision would need into the
	// budget a user would ask for; the reason of a comparison refused
	// for too few pairs then names that budget.
	BudgetFor func(need time.Duration) time.Duration
	// Now is the clock (default time.Now); the time allowed is ctx's
	// deadline.
	Now func() time.Time
	// Progress, when set, is told what runs next, in words.
	Progress func(string)
}

// Outcome is one candidate's runs.
type Outcome struct {
	// Setting is the candidate's name.
	Setting string
	// Defaults[i] is the defaults' run paired with Samples[i].
	Defaults, Samples []Sample
	// Failed says how a run of it failed (crashed, hung, refused); such
	// a candidate is not run again and never chosen.
	Failed string
	// Unsteady counts its pairs dropped because a run stayed in
	// transition through every retry.
	Unsteady int
}

// Pairs is how many pairs of the candidate were recorded.
func (o *Outcome) Pairs() int { return len(o.Samples) }

// Times are the times of measure k: the candidate's and the defaults'
// paired with them.
func (o *Outcome) Times(k int) (setting, defaults []float64) {
	return column(o.Samples, k), column(o.Defaults, k)
}

// Ratio is the median over the pairs of the candidate's time over the
// defaults' on measure k (below 1: faster); 0 without pairs.
func (o *Outcome) Ratio(k int) float64 {
	s, d := o.Times(k)
	r := make([]float64, 0, len(s))
	for i := range s {
		if d[i] > 0 {
			r = append(r, s[i]/d[i])
		}
	}
	return Median(r)
}

func column(v []Sample, k int) []float64 {
	out := make([]float64, 0, len(v))
	for _, s := range v {
		if k < len(s) {
			out = append(out, s[k])
		}
	}
	return out
}

// Result is what Compare found.
type Result struct {
	// Chosen is the candidate chosen, nil when the defaults stay.
	Chosen *Outcome
	// Verdict is the caller's verdict on the chosen candidate's primary
	// measure over all its pairs, or on the fastest candidate's when
	// none is chosen.
	Verdict Verdict
	// Decided is false when no candidate got MinPairs pairs (the time
	// ran out, or the defaults failed), or when the time ran out during
	// the confirmation; Why then says so.
	Decided bool
	// Why says why the defaults stay, or why the chosen candidate is not
	// the fastest measured; empty when the fastest was chosen.
	Why string
	// Need is the time a decision would need (every candidate's MinPairs
	// and the confirmation; or, with the confirmation cut short, its
	// missing pairs), at the pairs' cost here; set when Decided is false
	// and a pair was timed.
	Need time.Duration
	// Outcomes are every candidate's runs, in Config.Candidates' order.
	Outcomes []*Outcome
	// DefaultTimes are every recorded run of the defaults, Runs every
	// run started (reruns and failures included).
	DefaultTimes []Sample
	Runs         int
}

// DefaultMinPairs is Config.MinPairs's default: 4 pairs, the fewest on
// which a Mann-Whitney U test can separate two sets at p < 0.05.
const DefaultMinPairs = 4

// DefaultConfirmPairs is Config.ConfirmPairs's default: the fresh pairs
// that confirm a pick.
const DefaultConfirmPairs = 3

// SlowerBound is the most a chosen candidate may slow a secondary
// measure: the median of its paired ratios there must not pass it (nor
// may the verdict find the defaults faster there).
const SlowerBound = 1.10

// Compare times the defaults against each candidate until ctx's deadline
// and decides which candidate, if any, replaces the defaults:
//
//  1. rounds of pairs: in each round every live candidate's run is
//     paired with a run of the defaults, in a random order within the
//     pair, the candidates in a shuffled order; after MinPairs rounds a
//     candidate that is not faster than the defaults in the median of
//     its pairs is dropped; rounds go on up to MaxPairs while the time
//     left holds a round and the confirmation; past half of MinPairs,
//     when the time left cannot give every live candidate MinPairs and
//     the confirmation, only the fastest so far goes on;
//  2. a candidate with MinPairs pairs or more is eligible when the
//     verdict finds it faster on the primary measure and it slows no
//     other measure (SlowerBound, and the verdict with the roles
//     swapped); the eligible one with the lowest median ratio on the
//     primary measure is picked;
//  3. the pick runs ConfirmPairs fresh pairs: it is chosen when it is
//     faster on the primary measure in most of them and still eligible
//     on all its pairs.
//
// Without a candidate with MinPairs pairs, the result is not decided and
// Why says how many pairs each had, how many a decision needs, and the
// time (or, with BudgetFor, the budget) that would give them.
func Compare(ctx context.Context, cfg Config) Result {
	cfg = withDefaults(cfg)
	res := Result{}
	for _, c := range cfg.Candidates {
		res.Outcomes = append(res.Outcomes, &Outcome{Setting: c})
	}
	s := &session{cfg: cfg, res: &res, start: cfg.Now()}
	live := slices.Clone(res.Outcomes)
	for round := 0; round < cfg.MaxPairs; round++ {
		live = slices.DeleteFunc(live, func(o *Outcome) bool { return o.Failed != "" })
		if round >= cfg.MinPairs {
			live = slices.DeleteFunc(live, func(o *Outcome) bool { return o.Pairs() >= cfg.MinPairs && o.Ratio(0) >= 1 })
		}
		if len(live) == 0 || ctx.Err() != nil || s.dead != "" {
			break
		}
		// Past half of MinPairs, when the time left does not hold MinPairs
		// for every live candidate and the confirmation, only the one
		// fastest so far goes on.
		if half := (cfg.MinPairs + 1) / 2; round >= half && round < cfg.MinPairs && len(live) > 1 && s.pairs > 0 &&
			s.left(ctx) < s.pairCost()*time.Duration((cfg.MinPairs-round)*len(live)+cfg.ConfirmPairs) {
			best := slices.MinFunc(live, func(a, b *Outcome) int { return cmpFloat(ratioOr1(a), ratioOr1(b)) })
			live = []*Outcome{best}
		}
		// Stop when the time left does not hold this round and the
		// confirmation (a first round always starts).
		if s.pairs > 0 && s.left(ctx) < s.pairCost()*time.Duration(len(live)+cfg.ConfirmPairs) {
			break
		}
		order := slices.Clone(live)
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for k, o := range order {
			if ctx.Err() != nil || s.dead != "" {
				break
			}
			s.progress(fmt.Sprintf("round %d, %s (%d/%d)", round+1, o.Setting, k+1, len(order)))
			s.pair(ctx, o)
		}
	}
	s.decide(ctx)
	return res
}

// ratioOr1 is o's primary ratio, 1 without pairs.
func ratioOr1(o *Outcome) float64 {
	if o.Pairs() == 0 {
		return 1
	}
	return o.Ratio(0)
}

func withDefaults(cfg Config) Config {
	if cfg.Run == nil || cfg.Verdict == nil {
		panic("pairs: Config.Run and Config.Verdict are required")
	}
	for i, c := range cfg.Candidates {
		if c == "" || slices.Contains(cfg.Candidates[:i], c) {
			panic(fmt.Sprintf("pairs: candidate %q is empty or repeated", c))
		}
	}
	if cfg.MinPairs <= 0 {
		cfg.MinPairs = DefaultMinPairs
	}
	if cfg.MaxPairs < cfg.MinPairs {
		cfg.MaxPairs = max(8, cfg.MinPairs)
	}
	if cfg.ConfirmPairs <= 0 {
		cfg.ConfirmPairs = DefaultConfirmPairs
	}
	if cfg.Retries <= 0 {
		cfg.Retries = 2
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Progress == nil {
		cfg.Progress = func(string) {}
	}
	return cfg
}

// session is one Compare's state.
type session struct {
	cfg   Config
	res   *Result
	start time.Time
	pairs int    // pairs attempted
	dead  string // the defaults' run failed
}

func (s *session) progress(what string) { s.cfg.Progress(what) }

// left is the time to ctx's deadline (an hour without one).
func (s *session) left(ctx context.Context) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return time.Hour
	}
	return max(d.Sub(s.cfg.Now()), 0)
}

// pairCost is the mean time a pair took so far.
func (s *session) pairCost() time.Duration {
	if s.pairs == 0 {
		return 0
	}
	return s.cfg.Now().Sub(s.start) / time.Duration(s.pairs)
}

// run runs setting once, rerunning it while it is not in steady state.
func (s *session) run(ctx context.Context, setting string) (Sample, error) {
	var err error
	for try := 0; try <= s.cfg.Retries; try++ {
		s.res.Runs++
		var x Sample
		x, err = s.cfg.Run(ctx, setting)
		if err == nil && len(x) == 0 {
			err = errors.New("the run measured nothing")
		}
		if !errors.Is(err, ErrUnsteady) {
			return x, err
		}
	}
	return nil, err
}

// pair runs o and the defaults once each, in a random order, and records
// both when both were steady.
func (s *session) pair(ctx context.Context, o *Outcome) {
	s.pairs++
	var d, x Sample
	var derr, xerr error
	if rand.IntN(2) == 0 {
		d, derr = s.run(ctx, "")
		if derr == nil {
			x, xerr = s.run(ctx, o.Setting)
		}
	} else {
		x, xerr = s.run(ctx, o.Setting)
		if xerr == nil || errors.Is(xerr, ErrUnsteady) {
			d, derr = s.run(ctx, "")
		}
	}
	switch {
	case ctx.Err() != nil:
		return
	case derr != nil && !errors.Is(derr, ErrUnsteady):
		s.dead = "the defaults' run failed: " + derr.Error()
		return
	case xerr != nil && !errors.Is(xerr, ErrUnsteady):
		o.Failed = xerr.Error()
		return
	case derr != nil || xerr != nil:
		o.Unsteady++
		return
	case len(x) != len(d):
		o.Failed = fmt.Sprintf("it measured %d times a run, the defaults %d", len(x), len(d))
		return
	}
	o.Samples = append(o.Samples, x)
	o.Defaults = append(o.Defaults, d)
	s.res.DefaultTimes = append(s.res.DefaultTimes, d)
}

// eligible reports whether o may be chosen on its pairs: faster on the
// primary measure, slower on none; why says why not.
func (s *session) eligible(o *Outcome) (ok bool, v Verdict, why string) {
	xs, ds := o.Times(0)
	v = s.cfg.Verdict(ds, xs)
	if !v.Faster {
		return false, v, fmt.Sprintf("%s: %s", o.Setting, v.Test)
	}
	for k := 1; k < len(o.Samples[0]); k++ {
		xs, ds := o.Times(k)
		if r := o.Ratio(k); r > SlowerBound {
			return false, v, fmt.Sprintf("%s is faster on the first measure (%+.1f%%) but slower on measure %d (%.2fx the defaults in the median pair, more than %.2fx)", o.Setting, v.MarginPct, k+1, r, SlowerBound)
		}
		if back := s.cfg.Verdict(xs, ds); back.Faster {
			return false, v, fmt.Sprintf("%s is faster on the first measure (%+.1f%%) but the defaults are faster on measure %d (%s)", o.Setting, v.MarginPct, k+1, back.Test)
		}
	}
	return true, v, ""
}

// decide picks and confirms (steps 2 and 3 of Compare).
func (s *session) decide(ctx context.Context) {
	cfg, res := s.cfg, s.res
	if s.dead != "" {
		res.Why = "not decided: " + s.dead
		return
	}
	var ready, short []*Outcome
	for _, o := range res.Outcomes {
		switch {
		case o.Failed != "":
		case o.Pairs() >= cfg.MinPairs:
			ready = append(ready, o)
		default:
			short = append(short, o)
		}
	}
	if len(ready) == 0 {
		if len(short) == 0 {
			res.Decided = true
			res.Why = "every candidate failed"
			return
		}
		most := 0
		for _, o := range short {
			most = max(most, o.Pairs())
		}
		unit := "pairs"
		if most == 1 {
			unit = "pair"
		}
		res.Why = fmt.Sprintf("not decided: %d %s of each at most, need %d", most, unit, cfg.MinPairs)
		if c := s.pairCost(); c > 0 {
			res.Need = c * time.Duration(cfg.MinPairs*len(short)+cfg.ConfirmPairs)
			if cfg.BudgetFor != nil {
				res.Why += fmt.Sprintf("; a budget of %s would give them", cfg.BudgetFor(res.Need).Round(time.Second))
			} else {
				res.Why += fmt.Sprintf("; %s of runs would give them", res.Need.Round(100*time.Millisecond))
			}
		} else {
			res.Why += "; the time given did not hold one pair"
		}
		return
	}
	res.Decided = true
	slices.SortStableFunc(ready, func(a, b *Outcome) int { return cmpFloat(a.Ratio(0), b.Ratio(0)) })
	var pick *Outcome
	var whys []string
	for _, o := range ready {
		ok, v, why := s.eligible(o)
		if ok {
			pick, res.Verdict = o, v
			break
		}
		if o == ready[0] {
			res.Verdict = v
		}
		whys = append(whys, why)
	}
	if pick == nil {
		res.Why = "no candidate was faster than the defaults and slower on nothing (" + strings.Join(whys, "; ") + ")"
		return
	}
	before := pick.Pairs()
	for k := 0; k < cfg.ConfirmPairs && ctx.Err() == nil && s.dead == "" && pick.Failed == ""; k++ {
		s.progress(fmt.Sprintf("confirming %s, pair %d/%d", pick.Setting, k+1, cfg.ConfirmPairs))
		s.pair(ctx, pick)
	}
	faster := 0
	for i := before; i < pick.Pairs(); i++ {
		if pick.Samples[i][0] < pick.Defaults[i][0] {
			faster++
		}
	}
	ok, v, why := s.eligible(pick)
	res.Verdict = v
	fresh := pick.Pairs() - before
	switch {
	case ctx.Err() != nil && fresh < cfg.ConfirmPairs && s.dead == "" && pick.Failed == "":
		res.Decided = false
		res.Why = fmt.Sprintf("not decided: %s was faster (%+.1f%%), but the time ran out after %d of the %d fresh pairs that confirm it", pick.Setting, v.MarginPct, fresh, cfg.ConfirmPairs)
		res.Need = s.pairCost() * time.Duration(cfg.ConfirmPairs-fresh)
	case s.dead != "" || pick.Failed != "":
		res.Why = fmt.Sprintf("%s was faster (%+.1f%%), but its confirmation failed (%s%s)", pick.Setting, v.MarginPct, s.dead, pick.Failed)
	case 2*faster <= cfg.ConfirmPairs:
		res.Why = fmt.Sprintf("%s was faster (%+.1f%%) but did not hold in %d fresh pairs (faster in %d)", pick.Setting, v.MarginPct, cfg.ConfirmPairs, faster)
	case !ok:
		res.Why = fmt.Sprintf("%s did not hold on all its pairs pooled (%s)", pick.Setting, why)
	default:
		res.Chosen = pick
		if pick != ready[0] {
			res.Why = fmt.Sprintf("the fastest, %s, was not chosen: %s", ready[0].Setting, strings.Join(whys, "; "))
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
