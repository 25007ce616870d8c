package check

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/configsets"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/results"
)

// prepare validates cfg and fills in its defaults (the one place they are
// written): algorithms, thread counts sorted and each once, the measurer,
// the model.
func prepare(cfg Config) (Config, error) { return prepareFor(cfg, false) }

// prepareFor is prepare; a dry run (DryRun) does not need the topology's
// CPUs to be this process's.
func prepareFor(cfg Config, dry bool) (Config, error) {
	topo := cfg.Topology
	if topo == nil {
		return cfg, fmt.Errorf("check: no topology")
	}
	if cfg.Budget < 0 || cfg.SetsLimit < 0 || cfg.SampleTarget < 0 || cfg.Keep < 0 {
		return cfg, fmt.Errorf("check: budget %s, sets limit %d, sample time %s, keep %d: negative values are not accepted (0 takes the default)",
			cfg.Budget, cfg.SetsLimit, cfg.SampleTarget, cfg.Keep)
	}
	npus := len(topo.PUs())
	if npus < 1 {
		return cfg, fmt.Errorf("check: the topology has no PUs (want at least 1)")
	}
	if cfg.Measurer == nil {
		cfg.Measurer = Hardware{}
	}
	if err := cfg.Measurer.Accept(topo, dry); err != nil {
		return cfg, err
	}
	if cfg.Budget == 0 {
		cfg.Budget = DefaultBudget
	}
	if cfg.SetsLimit == 0 {
		cfg.SetsLimit = configsets.DefaultLimit
	}
	if cfg.SampleTarget == 0 {
		cfg.SampleTarget = DefaultSampleTime
	}
	if cfg.Keep == 0 {
		cfg.Keep = defaultKeep
	}
	if cfg.Model == "" {
		cfg.Model = model.DefaultModel
	}
	if err := cfg.Model.Check(); err != nil {
		return cfg, fmt.Errorf("check: %w", err)
	}
	algs := slices.Clone(cfg.Algorithms)
	if len(algs) == 0 {
		algs = catalog.Names()
	}
	for i, a := range algs {
		if _, err := barriers.Lookup(a); err != nil {
			return cfg, err
		}
		if slices.Contains(algs[:i], a) {
			return cfg, fmt.Errorf("algorithm %q is named twice; name each once", a)
		}
	}
	cfg.Algorithms = algs
	threads := slices.Clone(cfg.Threads)
	if len(threads) == 0 {
		threads = WithBoundaryCounts(DefaultThreadCounts(npus), topo)
	}
	for _, t := range threads {
		if t < 1 || t > barriers.MaxParticipants {
			return cfg, fmt.Errorf("thread count %d: want 1..%d", t, barriers.MaxParticipants)
		}
	}
	if len(cfg.Threads) == 0 {
		threads = WithOversubscribedCounts(threads, npus)
		if h, ok := cfg.Measurer.Hosts(); ok && !dry {
			// A machine of thousands of CPUs: its default counts (4x
			// the PUs) can exceed what this process hosts; explicit
			// counts are refused by the CLI instead.
			var left []string
			threads = slices.DeleteFunc(threads, func(t int) bool {
				if t > h.Max {
					left = append(left, strconv.Itoa(t))
					return true
				}
				return false
			})
			if len(left) > 0 {
				cfg.unhosted = fmt.Sprintf("thread counts %s not measured: more than the %d threads this process can host (the Go runtime's limit of %d OS threads less its own, or half the available memory at %d KiB a thread)",
					strings.Join(left, ", "), h.Max, h.ThreadLimit, ThreadMemory>>10)
			}
		}
	}
	// Each thread count once: a file with one twice is unreadable.
	slices.Sort(threads)
	cfg.Threads = slices.Compact(threads)
	return cfg, nil
}

// cand is one candidate barrier: an algorithm and, for the trees, its
// fan-in (the hybrid's composition is chosen per placement).
type cand struct {
	alg   string
	fanIn int
}

func (c cand) String() string {
	if c.fanIn > 0 {
		return c.alg + "(" + strconv.Itoa(c.fanIn) + ")"
	}
	return c.alg
}

// unit is one thread count of the plan.
type unit struct {
	threads int
	sets    []configsets.Set
	cands   []cand
	why     []string // why each candidate is measured, aligned with cands
	pruned  []string // each pruned candidate and its prediction
	// from is the first round to measure (a resumed count has the earlier
	// ones); calibrate marks the unit whose first round fits the model.
	from      int
	calibrate bool
	// predicted is the model's best candidate and time (pruned plans).
	predicted   string
	predictedNs float64
}

// plan is what the check will measure and with how many samples.
type plan struct {
	units   []unit
	floors  [][2]int
	levels  []string
	samples int
	rounds  int // passes over every placement, pooled
	cuts    []string
	// pruning: the space did not fit the budget and the model ranked the
	// candidates with kind, params on costs.
	pruning bool
	kind    model.Kind
	params  model.Params
	calib   *results.Calibration
	costs   model.Costs
	cfg     Config
	topo    *hwtree.Topology
	keep    int
	verbose bool
}

func (p *plan) placements() int {
	n := 0
	for _, u := range p.units {
		n += len(u.sets) * (p.rounds - min(u.from, p.rounds))
	}
	return n
}

// estimate is the predicted time of the plan: every candidate (and the
// floor beside it) of every placement pass, and the floors.
func (p *plan) estimate(target time.Duration) time.Duration {
	per := perCandidate(p.samples, target)
	var d time.Duration
	for _, u := range p.units {
		passes := len(u.sets) * max(p.rounds-u.from, 0)
		d += time.Duration(passes*(len(u.cands)+1)) * per
	}
	return d + time.Duration(len(p.floors))*per
}

// extras bounds what a live run does besides the samples estimate counts:
// the play-off (its finalists of each thread count, playoffRounds short
// rounds each, when the budget leaves room), the per-level latencies
// measured after the rounds and the block and wake-up measurement. A live
// run's rounds also pay for starting and pinning threads, composing the
// hybrid and (when pruning) fitting the model, which the estimate does not
// price: the check measures its first round and fits the rest to the
// budget at that pace (fitRounds).
func (p *plan) extras(cfg Config) time.Duration {
	per := perCandidate(max(minSamples, p.samples/3), cfg.SampleTarget)
	var d time.Duration
	for _, u := range p.units {
		if len(u.cands)*len(u.sets) >= 2 {
			d += time.Duration((playoffMax+1)*playoffRounds) * per
		}
	}
	return d + min(levelLatencyBudget, cfg.Budget/20) + wakeLimit
}

// makePlan chooses thread counts, placements, candidates and samples. When
// the whole space does not fit the budget (and cfg is not Exhaustive) it
// prunes: every count but the first (whose first round calibrates the
// model) keeps the cfg.Keep algorithms the model predicts fastest, each
// with its best fan-in, and the baselines. Then it cuts to fit: first
// repetitions (down to minSamples), then placements per thread count
// (down to 1), then thread counts (largest first). prev holds the rounds
// a resumed file has already measured per thread count.
func makePlan(cfg Config, prev map[int]resumed) (*plan, error) {
	topo := cfg.Topology
	p := &plan{samples: defaultSamples, rounds: 1, kind: cfg.Model, topo: topo, keep: cfg.Keep, verbose: cfg.Verbose}
	p.params, p.calib = paramsOf(cfg)
	p.cfg = cfg // its costs are built when first needed (O(PUs²)): modelCosts
	if !cfg.Measurer.CanPingPong() {
		// One P cannot ping-pong: measure what can run (oversubscribed
		// placements) without the floor.
		p.cuts = append(p.cuts, "no core-to-core floor: GOMAXPROCS is 1")
	} else if cfg.Resume == nil || len(cfg.Resume.Floor) == 0 {
		p.floors, p.levels = floorPairs(topo)
	}
	roundsPlanned := 0
	if cfg.Resume != nil {
		roundsPlanned = cfg.Resume.RoundsPlanned
	}
	space := configsets.NewSpace(topo)
	npus := len(topo.PUs())
	all := make([]cand, len(cfg.Algorithms))
	for i, a := range cfg.Algorithms {
		all[i] = cand{alg: a}
		if model.TakesFanIn(a) {
			all[i].fanIn = model.DefaultFanIn
		}
	}
	var threads []int
	for _, t := range cfg.Threads {
		r, ok := prev[t]
		if done := ok && r.entry.Complete && (roundsPlanned == 0 || r.rounds >= roundsPlanned); !done {
			threads = append(threads, t)
		}
	}
	limit := cfg.SetsLimit
	build := func() error {
		p.units = p.units[:0]
		for _, t := range threads {
			var sets []configsets.Set
			if t > npus {
				// More threads than PUs: one placement, round-robin.
				cpus := osal.RoundRobin(t, topo.Allowed())
				sets = []configsets.Set{{Threads: t, CPUs: cpus, Label: "oversubscribed round-robin"}}
			} else {
				var err error
				if sets, err = space.Representatives(t, limit); err != nil {
					return err
				}
			}
			u := unit{threads: t, sets: sets, cands: slices.Clone(all)}
			u.why = make([]string, len(all))
			for i := range u.why {
				u.why[i] = "measured: the space fits the budget"
			}
			if r, ok := prev[t]; ok && r.rounds > 0 && sameSets(r.cpus, sets) {
				u.from = r.rounds
			}
			p.units = append(p.units, u)
		}
		return nil
	}
	if err := build(); err != nil {
		return nil, err
	}
	if cfg.Exhaustive {
		for i := range p.units {
			for j := range p.units[i].why {
				p.units[i].why[j] = "exhaustive"
			}
		}
		p.rounds = 1
		return p, nil
	}
	fits := func() bool { return p.estimate(cfg.SampleTarget) <= cfg.Budget }
	if !fits() && len(all) > cfg.Keep+len(baselines()) {
		p.pruning = true
		if err := p.prune(1); err != nil {
			return nil, err
		}
	}
	for !fits() && p.samples > minSamples {
		p.samples = max(minSamples, p.samples*2/3)
	}
	if p.samples < defaultSamples {
		p.cuts = append(p.cuts, fmt.Sprintf("repetitions cut from %d to %d samples per candidate", defaultSamples, p.samples))
	}
	for !fits() && limit > 1 {
		limit = max(1, limit/2)
		if err := build(); err != nil {
			return nil, err
		}
		if p.pruning {
			if err := p.prune(1); err != nil {
				return nil, err
			}
		}
		p.cuts = append(p.cuts, fmt.Sprintf("placements per thread count cut to %d", limit))
	}
	for !fits() && len(p.units) > 1 {
		last := p.units[len(p.units)-1]
		p.units = p.units[:len(p.units)-1]
		p.cuts = append(p.cuts, fmt.Sprintf("%d threads skipped", last.threads))
	}
	// Spend spare budget on repetition: up to maxRounds passes over every
	// placement, spread in time and pooled, while they fit in a quarter of
	// the budget. One burst of samples can fall in a noisy moment.
	if roundsPlanned > 0 {
		p.rounds = roundsPlanned // a resumed check finishes the rounds it planned
		return p, nil
	}
	for p.rounds < maxRounds {
		p.rounds++
		if p.estimate(cfg.SampleTarget) > cfg.Budget/4 {
			p.rounds--
			break
		}
	}
	return p, nil
}

// resumed is what a resumed file holds for one thread count: the rounds
// measured, its placements, and its measurements with their samples.
type resumed struct {
	rounds int
	cpus   [][]int
	entry  results.Threads
}

func sameSets(cpus [][]int, sets []configsets.Set) bool {
	if len(cpus) != len(sets) {
		return false
	}
	for i := range sets {
		if !slices.Equal(cpus[i], sets[i].CPUs) {
			return false
		}
	}
	return true
}

// paramsOf returns the model constants pruning starts from: cfg's
// calibration (a resumed or replayed file's), else the defaults.
func paramsOf(cfg Config) (model.Params, *results.Calibration) {
	c := cfg.Calibration
	if c == nil && cfg.Resume != nil {
		c = cfg.Resume.Calibration
	}
	if c == nil {
		return model.DefaultParams(), nil
	}
	return paramsFrom(c), c
}

// planCosts are the latencies pruning starts from: cfg.Costs, the
// measurer's, the resumed file's per-level latencies, else the tree's
// typical ones.
func planCosts(cfg Config) model.Costs {
	if cfg.Costs != nil {
		return cfg.Costs
	}
	if cfg.Measurer != nil {
		if c := cfg.Measurer.Costs(); c != nil {
			return c
		}
	}
	var floors []results.Floor
	var lat []results.LevelLatency
	if r := cfg.Resume; r != nil {
		floors, lat = r.Floor, r.Latency
	} else if c := cfg.Calibration; c != nil {
		return model.NewTreeCosts(cfg.Topology)
	}
	return model.NewTreeCostsFrom(cfg.Topology, byLevel(floors, lat))
}

// byLevel is the latency per tree level: each per-level latency, then
// each floor's (a floor overrides).
func byLevel(floors []results.Floor, latency []results.LevelLatency) map[hwtree.Type]float64 {
	m := map[hwtree.Type]float64{}
	for _, l := range latency {
		if t, err := hwtree.ParseType(l.Level); err == nil && l.MedianNs > 0 {
			m[t] = l.MedianNs
		}
	}
	for _, f := range floors {
		if t, err := hwtree.ParseType(f.Level); err == nil && f.MedianNs > 0 {
			m[t] = f.MedianNs
		}
	}
	return m
}

// prune ranks every candidate of the units from index first on with the
// model and keeps p.keep algorithms and the baselines; units before first
// (the calibration unit) keep every candidate.
func (p *plan) prune(first int) error {
	if len(p.units) > 0 && first > 0 {
		p.units[0].calibrate = true
		for i := range p.units[0].why {
			p.units[0].why[i] = "calibration: every candidate's first round fits the model"
		}
	}
	p.modelCosts() // built once, before the goroutines read them
	algs := map[string]bool{}
	for _, u := range p.units {
		for _, c := range u.cands {
			algs[c.alg] = true
		}
	}
	return parallel(len(p.units)-min(first, len(p.units)), func(i int) error {
		u := &p.units[first+i]
		if u.from > 0 {
			return nil // resumed: its candidates are those its file measured
		}
		return p.pruneUnit(u, algs)
	})
}

// prediction is one candidate's best predicted time over a unit's
// placements.
type prediction struct {
	c  cand
	ns float64
}

// pruneUnit predicts every candidate (every fan-in of the trees, the
// hybrid composed) on every placement of u, and keeps the best p.keep
// algorithms and the baselines.
func (p *plan) pruneUnit(u *unit, algs map[string]bool) error {
	var preds []prediction
	for _, a := range catalog.Names() {
		if !algs[a] {
			continue
		}
		fanIns := []int{0}
		if model.TakesFanIn(a) {
			fanIns = model.FanInCandidates()
		}
		for _, k := range fanIns {
			pr := prediction{c: cand{a, k}, ns: math.Inf(1)}
			for _, s := range u.sets {
				ns, err := p.predict(pr.c, s.CPUs)
				if err == nil && !math.IsNaN(ns) {
					pr.ns = min(pr.ns, ns)
				}
			}
			preds = append(preds, pr)
		}
	}
	sort.SliceStable(preds, func(i, j int) bool { return preds[i].ns < preds[j].ns })
	u.cands, u.why, u.pruned = nil, nil, nil
	if len(preds) > 0 && !math.IsInf(preds[0].ns, 0) {
		u.predicted, u.predictedNs = preds[0].c.String(), preds[0].ns
	}
	kept := map[string]bool{}
	add := func(pr prediction, why string) {
		u.cands = append(u.cands, pr.c)
		u.why = append(u.why, why)
		kept[pr.c.alg] = true
	}
	n := 0
	for _, pr := range preds {
		if n < p.keep && !kept[pr.c.alg] && !math.IsInf(pr.ns, 0) {
			n++
			add(pr, fmt.Sprintf("predicted %d of the best %d: %.0f ns", n, p.keep, pr.ns))
		}
	}
	for _, b := range baselines() {
		if !algs[b] || kept[b] {
			continue
		}
		for _, pr := range preds {
			if pr.c.alg == b {
				add(pr, "baseline: "+describeNS(pr.ns, u.predictedNs))
				break
			}
		}
	}
	for _, pr := range preds {
		if !slices.Contains(u.cands, pr.c) {
			u.pruned = append(u.pruned, pr.c.String()+": "+describeNS(pr.ns, u.predictedNs))
		}
	}
	return nil
}

// modelCosts are the latencies pruning predicts with (planCosts), built
// when first needed.
func (p *plan) modelCosts() model.Costs {
	if p.costs == nil {
		p.costs = planCosts(p.cfg)
	}
	return p.costs
}

// predict is the model's time for c on cpus with the plan's constants.
func (p *plan) predict(c cand, cpus cpuset.Placement) (float64, error) {
	if c.alg == algname.Hybrid {
		_, ns, err := model.HybridForWith(p.kind, p.topo, cpus, p.costs, p.params)
		return ns, err
	}
	return model.PredictWith(p.kind, c.alg, cpus, p.costs, c.fanIn, p.params)
}

func describeNS(ns, best float64) string {
	if math.IsInf(ns, 0) || math.IsNaN(ns) {
		return "not modelled"
	}
	if best > 0 {
		return fmt.Sprintf("predicted %.0f ns, %.2fx the best", ns, ns/best)
	}
	return fmt.Sprintf("predicted %.0f ns", ns)
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

// setLabel is a placement's label, or its config string.
func setLabel(set configsets.Set) string {
	if set.Label == "" {
		return set.Config
	}
	return set.Label
}

// parallel calls fn(0..n-1) on up to GOMAXPROCS goroutines and returns
// the errors, joined in index order.
func parallel(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(n, runtime.GOMAXPROCS(0)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				errs[i] = fn(i)
			}
		}()
	}
	wg.Wait()
	return errors.Join(slices.DeleteFunc(errs, func(e error) bool { return e == nil })...)
}
