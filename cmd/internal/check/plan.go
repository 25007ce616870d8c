package check

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/configsets"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/results"
)

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
