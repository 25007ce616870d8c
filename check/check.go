// Package check is the install-time check: it times every barrier
// algorithm on representative placements of every chosen thread count,
// measures the core-to-core floor at each level of the CPU tree, and picks
// the winners, within a time budget. The outcome is a results.File.
package check

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/configsets"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/measure"
	"github.com/barriertune/barriertune/osal"
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
	// TieFraction: winners within 3% of the best are tied even when the
	// difference is significant (see tied); the simpler algorithm
	// (catalog order) wins.
	TieFraction = 0.03
	// DropFactor drops a candidate once it is twice as slow as the best.
	DropFactor = 2.0
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

type unit struct {
	threads int
	sets    []configsets.Set
}

// plan is what the check will measure and with how many samples.
type plan struct {
	units   []unit
	floors  [][2]int
	levels  []string
	samples int
	rounds  int // passes over every placement, pooled
	cuts    []string
}

func (p *plan) placements() int {
	n := 0
	for _, u := range p.units {
		n += len(u.sets)
	}
	return n
}

// estimate is the predicted time of the plan: every candidate (and the
// floor) takes samples plus about eight calibration samples, and teams,
// skew and blocking baselines add about half again.
func (p *plan) estimate(cands int, target time.Duration) time.Duration {
	per := time.Duration(p.samples+8) * target
	d := time.Duration(p.placements()*max(p.rounds, 1)) * time.Duration(cands+1) * per
	d += time.Duration(len(p.floors)) * per
	return d * 3 / 2
}

// Run performs the check. When ctx is cancelled or the budget runs out it
// stops at the next sample and returns what was measured, marked partial,
// with ctx's error (or nil when only the budget ran out).
func Run(ctx context.Context, cfg Config) (*results.File, error) {
	start := time.Now()
	topo := cfg.Topology
	if topo == nil {
		return nil, fmt.Errorf("check: no topology")
	}
	if cfg.Budget <= 0 {
		cfg.Budget = DefaultBudget
	}
	if cfg.SetsLimit <= 0 {
		cfg.SetsLimit = configsets.DefaultLimit
	}
	if cfg.SampleTarget <= 0 {
		cfg.SampleTarget = 200 * time.Microsecond
	}
	algs := cfg.Algorithms
	if len(algs) == 0 {
		algs = barriers.Names()
	}
	for _, a := range algs {
		if _, err := barriers.Lookup(a); err != nil {
			return nil, err
		}
	}
	npus := len(topo.PUs())
	threads := cfg.Threads
	if len(threads) == 0 {
		threads = DefaultThreadCounts(npus)
	}
	for _, t := range threads {
		if t < 1 {
			return nil, fmt.Errorf("thread count %d: want at least 1", t)
		}
	}
	allowed, err := osal.Allowed()
	if err != nil {
		return nil, err
	}
	if !topo.Allowed().SubsetOf(allowed) {
		return nil, fmt.Errorf("the topology's CPUs %s are not all allowed for this process (allowed: %s); the check runs on the live machine", topo.Allowed(), allowed)
	}

	f := &results.File{
		Schema:  results.Schema,
		Tool:    results.Tool{Name: "barriertune", Version: cfg.Version},
		Time:    start.UTC().Round(time.Second),
		Machine: results.CurrentMachine(topo),
		Budget:  cfg.Budget.String(),
		Cuts:    []string{},
		Floor:   []results.Floor{},
		Threads: []results.Threads{},
	}
	done := map[int]bool{}
	if r := cfg.Resume; r != nil {
		if why := r.Machine.Mismatch(f.Machine); why != "" {
			return nil, fmt.Errorf("cannot resume results of another machine: %s", why)
		}
		f.Floor = r.Floor
		for _, t := range r.Threads {
			if t.Complete {
				f.Threads = append(f.Threads, t)
				done[t.Threads] = true
			}
		}
	}

	p, err := makePlan(topo, threads, done, cfg, len(algs), len(f.Floor) == 0)
	if err != nil {
		return nil, err
	}
	f.Cuts = append(f.Cuts, p.cuts...)
	ctx, cancel := context.WithDeadline(ctx, start.Add(cfg.Budget))
	defer cancel()
	opts := measure.Options{Samples: p.samples, SampleTarget: cfg.SampleTarget, DropFactor: DropFactor, Context: ctx, Floor: true}

	for i, pair := range p.floors {
		pp, err := measure.PingPongLatency(pair[0], pair[1], opts)
		if err != nil {
			return nil, fmt.Errorf("floor between CPUs %d and %d: %w", pair[0], pair[1], err)
		}
		f.Floor = append(f.Floor, results.Floor{Level: p.levels[i], CPUs: pair, MedianNs: pp.MedianNs, MinNs: pp.MinNs, MaxNs: pp.MaxNs})
	}

	total, measured := p.placements()*p.rounds, 0
	estimate := p.estimate(len(algs), cfg.SampleTarget)
	type key struct{ unit, set int }
	pooled := map[key][]measure.Result{}
	// Per placement and candidate, the floor-normalised samples of every
	// pass (sample over the same round's floor sample), and the floors.
	ratios := map[key][][]float64{}
	floorSamples := map[key][]float64{}
	cut := map[key]bool{}
	stopped := false
rounds:
	for round := 0; round < p.rounds; round++ {
		for ui, u := range p.units {
			for si, set := range u.sets {
				if ctx.Err() != nil {
					stopped = true
					break rounds
				}
				label := set.Label
				if label == "" {
					label = set.Config
				}
				if cfg.Progress != nil {
					el := time.Since(start)
					cfg.Progress(Progress{Threads: u.threads, Set: si + 1, Sets: len(u.sets), Label: label, Round: round + 1, Rounds: p.rounds,
						Algorithms: len(algs), Done: measured, Total: total, Elapsed: el, Remaining: max(estimate-el, 0)})
				}
				policy := measure.DefaultPolicy(set.CPUs)
				cands := make([]measure.Candidate, len(algs))
				for i, a := range algs {
					cands[i] = measure.Candidate{Algorithm: a, Policy: policy}
				}
				run, err := measure.Barriers(set.CPUs, cands, opts)
				if err != nil {
					return nil, fmt.Errorf("%d threads on CPUs %v: %w", u.threads, set.CPUs, err)
				}
				k := key{ui, si}
				if run.FloorSamples != nil {
					if ratios[k] == nil {
						ratios[k] = make([][]float64, len(cands))
					}
					for i, r := range run.Results {
						for j := 0; j < min(len(r.Samples), len(run.FloorSamples)); j++ {
							ratios[k][i] = append(ratios[k][i], r.Samples[j]/run.FloorSamples[j])
						}
					}
					floorSamples[k] = append(floorSamples[k], run.FloorSamples...)
				}
				if prev, ok := pooled[k]; ok {
					for i := range prev {
						prev[i].Samples = append(prev[i].Samples, run.Results[i].Samples...)
						prev[i].Dropped = prev[i].Dropped && run.Results[i].Dropped // dropped in every pass
					}
				} else {
					pooled[k] = run.Results
				}
				measured++
				if ctx.Err() != nil && slices.ContainsFunc(run.Results, func(r measure.Result) bool { return !r.Dropped && r.Reps < p.samples }) && round == 0 {
					cut[k] = true // this placement's only pass was cut short
				}
			}
		}
	}
	for ui, u := range p.units {
		entry := results.Threads{Threads: u.threads, Measurements: []results.Measurement{}, Complete: true}
		var samples []scoringSamples // aligned with entry.Measurements
		for si, set := range u.sets {
			k := key{ui, si}
			rs, ok := pooled[k]
			if !ok || cut[k] {
				entry.Complete = false
			}
			label := set.Label
			if label == "" {
				label = set.Config
			}
			for i, r := range rs {
				r.Summarise()
				ss := scoringSamples{raw: r.Samples}
				// Floor-normalised: the median ratio to the same round's
				// floor, in ns at the floor's median. Slow drift on a shared
				// machine hits a round's candidate and floor alike and cancels.
				norm := 0.0
				if rk := ratios[k]; rk != nil && len(rk[i]) > 0 {
					fm := measure.Median(floorSamples[k])
					norm = measure.Median(rk[i]) * fm
					for _, x := range rk[i] {
						ss.normalized = append(ss.normalized, x*fm)
					}
				}
				samples = append(samples, ss)
				entry.Measurements = append(entry.Measurements, results.Measurement{
					Algorithm: r.Algorithm, Policy: r.Policy, Label: label, Config: set.Config,
					CPUs: r.CPUs, Pinned: r.Pinned, MedianNs: r.MedianNs, MinNs: r.MinNs, MaxNs: r.MaxNs,
					CILowNs: r.CILowNs, CIHighNs: r.CIHighNs, NormalizedNs: norm, Reps: r.Reps, Dropped: r.Dropped,
				})
			}
		}
		entry.Best = best(entry.Measurements, samples)
		entry.Robust = robust(entry.Measurements)
		if len(entry.Measurements) > 0 {
			f.Threads = append(f.Threads, entry)
		}
	}
	if stopped && p.rounds > 1 {
		f.Cuts = append(f.Cuts, fmt.Sprintf("stopped after %d of %d placement passes", measured, total))
	}
	slices.SortFunc(f.Threads, func(a, b results.Threads) int { return a.Threads - b.Threads })
	// Partial means the plan was not finished; thread counts the plan cut
	// for the budget are listed in Cuts instead.
	for _, u := range p.units {
		if e := f.Lookup(u.threads); e == nil || !e.Complete {
			f.Partial = true
		}
	}
	if f.Partial && ctx.Err() == context.DeadlineExceeded {
		f.Cuts = append(f.Cuts, fmt.Sprintf("the budget of %s ran out after %d of %d placement passes", cfg.Budget, measured, total))
		return f, nil
	}
	return f, context.Cause(ctx)
}

// makePlan chooses placements and samples, cutting to fit the budget:
// first repetitions (down to MinSamples), then placements per thread count
// (down to 1), then thread counts (largest first).
func makePlan(topo *hwtree.Topology, threads []int, done map[int]bool, cfg Config, cands int, floors bool) (*plan, error) {
	p := &plan{samples: DefaultSamples}
	if floors {
		p.floors, p.levels = floorPairs(topo)
	}
	space := configsets.NewSpace(topo)
	npus := len(topo.PUs())
	limit := cfg.SetsLimit
	build := func() error {
		p.units = p.units[:0]
		for _, t := range threads {
			if done[t] {
				continue
			}
			if t > npus {
				// More threads than PUs: one placement, round-robin.
				cpus := osal.RoundRobin(t, topo.Allowed())
				p.units = append(p.units, unit{t, []configsets.Set{{Threads: t, CPUs: cpus, Label: "oversubscribed round-robin"}}})
				continue
			}
			sets, err := space.Representatives(t, limit)
			if err != nil {
				return err
			}
			p.units = append(p.units, unit{t, sets})
		}
		return nil
	}
	if err := build(); err != nil {
		return nil, err
	}
	fits := func() bool { return p.estimate(cands, cfg.SampleTarget) <= cfg.Budget }
	for !fits() && p.samples > MinSamples {
		p.samples = max(MinSamples, p.samples*2/3)
	}
	if p.samples < DefaultSamples {
		p.cuts = append(p.cuts, fmt.Sprintf("repetitions cut from %d to %d samples per candidate", DefaultSamples, p.samples))
	}
	for !fits() && limit > 1 {
		limit = max(1, limit/2)
		if err := build(); err != nil {
			return nil, err
		}
		p.cuts = append(p.cuts, fmt.Sprintf("placements per thread count cut to %d", limit))
	}
	for !fits() && len(p.units) > 1 {
		last := p.units[len(p.units)-1]
		p.units = p.units[:len(p.units)-1]
		p.cuts = append(p.cuts, fmt.Sprintf("%d threads skipped", last.threads))
	}
	// Spend spare budget on repetition: up to MaxRounds passes over every
	// placement, spread in time and pooled, while they fit in a quarter of
	// the budget. One burst of samples can fall in a noisy moment.
	p.rounds = 1
	for p.rounds < MaxRounds {
		p.rounds++
		if p.estimate(cands, cfg.SampleTarget) > cfg.Budget/4 {
			p.rounds--
			break
		}
	}
	return p, nil
}

// floorPairs returns one CPU pair per level of the tree: the first PU with
// the first PU whose deepest common ancestor with it is each distinct
// object (same core, same L2, same L3, same package, across packages).
func floorPairs(topo *hwtree.Topology) ([][2]int, []string) {
	pus := topo.PUs()
	if len(pus) < 2 {
		return nil, nil
	}
	var pairs [][2]int
	var levels []string
	seen := map[*hwtree.Object]bool{}
	for _, q := range pus[1:] {
		lca := topo.Covering(pus[0].CPUSet.Or(q.CPUSet))
		if lca == nil || seen[lca] {
			continue
		}
		seen[lca] = true
		pairs = append(pairs, [2]int{pus[0].OSIndex, q.OSIndex})
		levels = append(levels, lca.Type.String())
	}
	return pairs, levels
}

// rank is an algorithm's place in the catalog: lower is simpler.
func rank(alg string) int { return slices.Index(barriers.Names(), alg) }

// valid reports whether a measurement may win: enough samples, not dropped.
func valid(m results.Measurement) bool {
	return !m.Dropped && m.Reps > 0 && !math.IsNaN(m.MedianNs)
}

// best picks the fastest (algorithm, placement); candidates tied with it
// (see tied: within TieFraction, or not significantly different by their
// samples, aligned with ms, nil where unknown) are settled by TieRule.
func best(ms []results.Measurement, samples []scoringSamples) *results.Choice {
	score := scorer(ms)
	normalized := allNormalized(ms) // the scale score ranks by
	sampleOf := func(i int) []float64 {
		if i < len(samples) {
			return samples[i].pick(normalized)
		}
		return nil
	}
	fastest, fi := math.Inf(1), -1
	for i, m := range ms {
		if valid(m) && score(m) < fastest {
			fastest, fi = score(m), i
		}
	}
	if fi < 0 {
		return nil
	}
	var win *results.Measurement
	for i := range ms {
		m := &ms[i]
		if !valid(*m) || !tied(fastest, score(*m), sampleOf(fi), sampleOf(i)) {
			continue
		}
		if win == nil || rank(m.Algorithm) < rank(win.Algorithm) ||
			rank(m.Algorithm) == rank(win.Algorithm) && score(*m) < score(*win) {
			win = m
		}
	}
	c := &results.Choice{Algorithm: win.Algorithm, Policy: win.Policy, CPUs: win.CPUs, Label: win.Label, Pinned: win.Pinned,
		MedianNs: win.MedianNs, CILowNs: win.CILowNs, CIHighNs: win.CIHighNs}
	runner := math.Inf(1)
	for _, m := range ms {
		if valid(m) && m.Algorithm != win.Algorithm && score(m) < runner {
			runner, c.RunnerUp = score(m), m.Algorithm
		}
	}
	if c.RunnerUp != "" {
		c.MarginPct = math.Round((runner/score(*win)-1)*1000) / 10
	}
	return c
}

// scorer ranks by the floor-normalised median when every valid
// measurement has one (placements measured alongside their floor), else by
// the raw median.
func scorer(ms []results.Measurement) func(results.Measurement) float64 {
	for _, m := range ms {
		if valid(m) && !(m.NormalizedNs > 0) {
			return func(m results.Measurement) float64 { return m.MedianNs }
		}
	}
	return func(m results.Measurement) float64 { return m.NormalizedNs }
}

// robust picks the algorithm whose slowest placement is fastest, among
// those measured on every placement (a dropped measurement still counts: it
// was at least twice the best there).
func robust(ms []results.Measurement) *results.Robust {
	score := scorer(ms)
	placements := map[string]bool{}
	worst := map[string]results.Measurement{}
	count := map[string]int{}
	for _, m := range ms {
		key := fmt.Sprint(m.CPUs)
		placements[key] = true
		if m.Reps == 0 || math.IsNaN(m.MedianNs) {
			continue
		}
		count[m.Algorithm]++
		if w, ok := worst[m.Algorithm]; !ok || score(m) > score(w) {
			worst[m.Algorithm] = m
		}
	}
	var out *results.Robust
	bestWorst := math.Inf(1)
	for _, w := range worst {
		if count[w.Algorithm] == len(placements) {
			bestWorst = min(bestWorst, score(w))
		}
	}
	for _, a := range barriers.Names() {
		w, ok := worst[a]
		if !ok || count[a] != len(placements) || score(w) > bestWorst*(1+TieFraction) {
			continue
		}
		if out == nil {
			out = &results.Robust{Algorithm: a, Policy: w.Policy, WorstMedianNs: score(w), WorstLabel: w.Label, Placements: len(placements)}
		}
	}
	return out
}
