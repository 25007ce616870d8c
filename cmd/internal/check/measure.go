package check

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/barriertune/barriertune/cpuset"

	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/results"
)

// The play-off: after the rounds, the candidates of a thread count whose
// ranked episode (rankNs) is within playoffMargin of the best (at most playoffMax of
// them) are measured again, interleaved among themselves only, in
// playoffRounds short rounds of a third of the samples, when the budget
// leaves room; their samples pool with the rounds'.
const (
	playoffMargin = 0.10
	playoffMax    = 3
	playoffRounds = 3
)

// candidateInstances is how many separately allocated barriers time each
// candidate, every sample their average (measure.Options.Instances): one
// instance of central ran 150, another 276 ns in the same
// run, and a winner must not be the luck of one allocation. Every pass
// allocates them afresh.
const candidateInstances = 3

// key names one placement of the plan: unit (thread count) and set.
type key struct{ unit, set int }

// samples is everything the measure step gathered.
type samples struct {
	floors []results.Floor
	// pooled holds, per placement, every candidate's results of every
	// pass.
	pooled map[key][]measure.Result
	// pairs holds, per placement and candidate, every pass's samples
	// each with the same round's floor sample; floorSamples the floor's
	// samples, and pairOf the CPUs of the floor beside each placement.
	pairs        map[key][][]pairSample
	floorSamples map[key][]float64
	pairOf       map[key][2]int
	// states are the host states each floor pair saw (analyse); repeats
	// the candidates measured again before they could win, per unit, and
	// rejected those that may not win (confirm).
	states   map[[2]int]*pairStates
	repeats  map[int][]results.Repeat
	rejected map[key]map[int]string
	// cut marks placements whose only pass was cut short.
	cut map[key]bool
	// rounds counts the passes each unit finished over all its
	// placements.
	rounds          map[int]int
	measured, total int // placement passes measured, planned
	// stopped: ctx ended before the plan was done; budgetOut: the
	// measurer's clock passed the deadline.
	stopped, budgetOut bool
	playoffs           int // play-off passes measured
	roundsCut          string
	// plannedRounds is the plan's rounds before fitRounds cut them: the
	// most a later, faster round restores.
	plannedRounds int
	slowdown      float64 // the first round's time over the plan's estimate (at least 1)
	// notes record each candidate's composition, fan-in and level keys,
	// by annotationKey.
	notes       map[string]annotation
	calibration *results.Calibration
}

// measurePlan measures the plan's floors, then every candidate on every
// placement, p.rounds passes, then the play-off; it stops early when ctx
// ends or the measurer's clock passes deadline. The first round of the
// first unit calibrates the model; when the plan prunes, the later units
// are pruned again with the calibrated model.
func measurePlan(ctx context.Context, p *plan, cfg Config, prev map[int]resumed, deadline time.Time) (*samples, error) {
	m := cfg.Measurer
	// A round that outlasts the budget (hundreds of goroutines) stops
	// after the sample that ends it, even the first: a candidate left
	// without a sample is not written (measurements).
	opts := measure.Options{Samples: p.samples, SampleTarget: cfg.SampleTarget, DropFactor: dropFactor, Context: ctx, Floor: true, Instances: candidateInstances, MayEndEmpty: true}
	s := &samples{slowdown: 1,
		pooled: map[key][]measure.Result{}, pairs: map[key][][]pairSample{},
		floorSamples: map[key][]float64{}, pairOf: map[key][2]int{},
		repeats: map[int][]results.Repeat{}, rejected: map[key]map[int]string{}, cut: map[key]bool{}, rounds: map[int]int{}, total: p.placements(),
		notes: map[string]annotation{}, calibration: p.calib,
	}
	for i, pair := range p.floors {
		pp, err := m.Floor(pair[0], pair[1], opts)
		if err != nil {
			return nil, fmt.Errorf("floor between CPUs %d and %d: %w", pair[0], pair[1], err)
		}
		s.floors = append(s.floors, results.Floor{Level: p.levels[i], CPUs: pair, MedianNs: pp.MedianNs, MinNs: pp.MinNs, MaxNs: pp.MaxNs})
	}
	floors, latency := s.floors, []results.LevelLatency(nil)
	if r := cfg.Resume; r != nil {
		latency = r.Latency
		if len(floors) == 0 {
			floors = r.Floor
		}
	}
	composer := newHybridComposer(cfg.Topology, floors, latency)
	if c := m.Costs(); c != nil {
		composer.costs = c
	}
	for ui := range p.units {
		s.seed(ui, &p.units[ui], prev)
		s.rounds[p.units[ui].threads] = p.units[ui].from
	}
	s.total = p.placements() // seeding may have sent a unit back to round 1
	composed := map[key][]measure.Candidate{}
	start := m.Now()
	estimate := p.estimate(cfg.SampleTarget)
	over := func() bool {
		if ctx.Err() != nil {
			s.stopped = true
			return true
		}
		if m.Expired(deadline) {
			s.budgetOut = true
			return true
		}
		return false
	}
	measureSet := func(ui, si int, u *unit, cands []cand, sub []int, o measure.Options) (measure.Run, error) {
		set := u.sets[si]
		k := key{ui, si}
		mc, ok := composed[k]
		if !ok {
			var notes []annotation
			var err error
			mc, notes, err = composer.candidates(cands, set.CPUs, m.Policy(set.CPUs))
			if err != nil {
				return measure.Run{}, fmt.Errorf("%d threads: %w", u.threads, err)
			}
			composed[k] = mc
			for i, c := range cands {
				s.notes[annotationKey(c.alg, set.CPUs)] = notes[i]
			}
		}
		if sub != nil {
			picked := make([]measure.Candidate, len(sub))
			for i, j := range sub {
				picked[i] = mc[j]
			}
			mc = picked
		}
		run, err := m.Placement(set.CPUs, mc, o)
		if err != nil {
			return run, fmt.Errorf("%d threads on CPUs %s: %w", u.threads, cpuset.FormatList(set.CPUs), err)
		}
		return run, nil
	}
	// The per-level latencies measured after the rounds keep their time.
	reserve := min(levelLatencyBudget, cfg.Budget/20)
	roundStart := start
	for round := 0; round < p.rounds; round++ {
		for ui := range p.units {
			u := &p.units[ui]
			if round < u.from {
				continue
			}
			for si := range u.sets {
				if over() {
					return s, nil
				}
				if cfg.Progress != nil {
					now := m.Now()
					el := now.Sub(start)
					cfg.Progress(Progress{Threads: u.threads, Set: si + 1, Sets: len(u.sets), Label: setLabel(u.sets[si]), Round: round + 1, Rounds: p.rounds,
						Algorithms: len(u.cands), Done: s.measured, Total: s.total, Elapsed: el, Remaining: s.remaining(estimate, el, deadline.Sub(now), reserve)})
				}
				// Composed once per placement: every pass measures the
				// same barriers, so their samples pool.
				run, err := measureSet(ui, si, u, u.cands, nil, opts)
				if err != nil {
					return nil, err
				}
				s.add(ctx, key{ui, si}, &run, nil, round == u.from, p.samples)
			}
			if ctx.Err() == nil {
				s.rounds[u.threads] = round + 1
			}
			if round == 0 && ui == 0 && p.calib == nil && ctx.Err() == nil {
				s.calibrate(p, composer, cfg)
			}
		}
		if ctx.Err() == nil {
			now := m.Now()
			s.fitRounds(p, round, now.Sub(roundStart), deadline.Sub(now)-reserve, estimate/time.Duration(max(p.rounds, 1)))
			roundStart = now
		}
	}
	// The play-off leaves the per-level latencies their time.
	s.playoff(p, cfg, measureSet, opts, deadline.Add(-reserve))
	// No winner below ImpossibleFraction of its floor: it is measured
	// again beside the floor first (in the per-level latencies' time).
	s.confirm(p, measureSet, opts, m, deadline)
	return s, nil
}

// fitRounds fits the rounds still to come after round (0-based) to the
// time left at the pace of the last one: it cuts them when that round took
// longer than the time left allows (a loaded machine, slow wake-ups: the
// plan's estimate was low), so that the check ends with whole rounds
// instead of running out of budget in the middle of one, and restores
// rounds cut earlier, up to the plan's, when later rounds run fast enough
// (one slow round, the first, cut them for good before). The first
// round's time over the plan's estimate is the slowdown the play-off's
// time is scaled by.
func (s *samples) fitRounds(p *plan, round int, took, left, planned time.Duration) {
	if round == 0 && planned > 0 {
		s.slowdown = max(1, float64(took)/float64(planned))
	}
	if s.plannedRounds == 0 {
		s.plannedRounds = p.rounds
	}
	if round+1 >= s.plannedRounds || took <= 0 {
		return
	}
	fit := min(s.plannedRounds, round+1+int(left/(took*5/4))) // a quarter's margin: rounds vary
	if fit == p.rounds {
		return
	}
	if fit < s.plannedRounds {
		s.roundsCut = fmt.Sprintf("rounds cut from %d to %d: round %d took %s, the plan estimated %s",
			s.plannedRounds, fit, round+1, took.Round(time.Millisecond), planned.Round(time.Millisecond))
	} else {
		s.roundsCut = "" // restored: nothing is cut
	}
	p.rounds = fit
	s.total = p.placements()
}

// remaining is the progress line's time left: the placement passes still
// to come at the pace of those measured (the plan's estimate before the
// first), plus what follows the rounds (the per-level latencies' reserve),
// at most the budget left.
func (s *samples) remaining(estimate, elapsed, left, reserve time.Duration) time.Duration {
	rem := max(estimate-elapsed, 0)
	if s.measured > 0 {
		rem = time.Duration(float64(elapsed) / float64(s.measured) * float64(max(s.total-s.measured, 0)))
	}
	return max(0, min(rem+reserve, left))
}

// seed pools a resumed unit's samples of its earlier rounds, when the file
// kept them for the same placements and candidates; otherwise the unit is
// measured from its first round.
func (s *samples) seed(ui int, u *unit, prev map[int]resumed) {
	if u.from == 0 {
		return
	}
	r := prev[u.threads]
	e := r.entry
	if len(e.Samples) != len(e.Measurements) || len(e.Measurements) != len(u.sets)*len(u.cands) {
		u.from = 0
		return
	}
	for si := range u.sets {
		var rs []measure.Result
		for ci, c := range u.cands {
			mm := e.Measurements[si*len(u.cands)+ci]
			if mm.Algorithm != c.alg || !slices.Equal(mm.CPUs, u.sets[si].CPUs) {
				u.from = 0
				delete(s.pooled, key{ui, si})
				return
			}
			rs = append(rs, measure.Result{Algorithm: mm.Algorithm, Policy: mm.Policy, Threads: u.threads, CPUs: mm.CPUs,
				Pinned: mm.Pinned, Dropped: mm.Dropped, Samples: slices.Clone(e.Samples[si*len(u.cands)+ci])})
		}
		s.pooled[key{ui, si}] = rs
	}
}

// add pools one pass over placement k; sub maps the run's results to the
// placement's candidates (nil: one result per candidate, in order).
func (s *samples) add(ctx context.Context, k key, run *measure.Run, sub []int, first bool, want int) {
	idx := func(i int) int {
		if sub != nil {
			return sub[i]
		}
		return i
	}
	if run.FloorSamples != nil && run.Floor != nil {
		if s.pairs[k] == nil {
			n := len(run.Results)
			if prev, ok := s.pooled[k]; ok {
				n = len(prev)
			}
			s.pairs[k] = make([][]pairSample, n)
		}
		for i, r := range run.Results {
			for j := 0; j < min(len(r.Samples), len(run.FloorSamples)); j++ {
				if run.FloorSamples[j] > 0 {
					s.pairs[k][idx(i)] = append(s.pairs[k][idx(i)], pairSample{r.Samples[j], run.FloorSamples[j]})
				}
			}
		}
		s.floorSamples[k] = append(s.floorSamples[k], run.FloorSamples...)
		s.pairOf[k] = pairOf(run.Floor.CPUs[:])
	}
	if prev, ok := s.pooled[k]; ok {
		for i, r := range run.Results {
			p := &prev[idx(i)]
			p.Samples = append(p.Samples, r.Samples...)
			p.Dropped = p.Dropped && r.Dropped // dropped in every pass
		}
	} else {
		s.pooled[k] = run.Results
	}
	if sub != nil {
		s.playoffs++
		return
	}
	s.measured++
	if ctx.Err() != nil && first && slices.ContainsFunc(run.Results, func(r measure.Result) bool { return !r.Dropped && r.Reps < want }) {
		s.cut[k] = true // this placement's only pass was cut short
	}
}

// playoff measures the closest candidates of each thread count again,
// interleaved among themselves, while the budget leaves room.
func (s *samples) playoff(p *plan, cfg Config,
	measureSet func(ui, si int, u *unit, cands []cand, sub []int, o measure.Options) (measure.Run, error), opts measure.Options, deadline time.Time) {
	m := cfg.Measurer
	opts.Samples = max(minSamples, p.samples/3)
	opts.DropFactor = 0
	s.analyse()
	for ui := range p.units {
		u := &p.units[ui]
		best := math.Inf(1)
		type fin struct {
			si, ci int
			ns     float64
		}
		var all []fin
		for si := range u.sets {
			for ci, r := range s.pooled[key{ui, si}] {
				if r.Dropped || len(r.Samples) == 0 {
					continue
				}
				med := s.rankNs(key{ui, si}, ci, r)
				all = append(all, fin{si, ci, med})
				best = min(best, med)
			}
		}
		sort.SliceStable(all, func(i, j int) bool { return all[i].ns < all[j].ns })
		var finals []fin
		for _, f := range all {
			if len(finals) < playoffMax && f.ns <= best*(1+playoffMargin) {
				finals = append(finals, f)
			}
		}
		if len(finals) < 2 {
			continue
		}
		bySet := map[int][]int{}
		for _, f := range finals {
			bySet[f.si] = append(bySet[f.si], f.ci)
		}
		sets := make([]int, 0, len(bySet))
		for si := range bySet {
			sets = append(sets, si)
		}
		slices.Sort(sets)
		cost := 0
		for _, si := range sets {
			cost += len(bySet[si]) + 1
		}
		need := time.Duration(float64(time.Duration(cost*playoffRounds)*perCandidate(opts.Samples, cfg.SampleTarget)) * s.slowdown)
		if m.Now().Add(need).After(deadline) {
			continue
		}
		for r := 0; r < playoffRounds; r++ {
			for _, si := range sets {
				if opts.Context.Err() != nil || m.Now().After(deadline) {
					return // the plan is done: a play-off cut short cuts nothing
				}
				run, err := measureSet(ui, si, u, u.cands, bySet[si], opts)
				if err != nil {
					continue
				}
				s.add(opts.Context, key{ui, si}, &run, bySet[si], false, opts.Samples)
			}
		}
	}
}
