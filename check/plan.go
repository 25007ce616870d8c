package check

import (
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/configsets"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/osal"
)

// prepare validates cfg and fills in its defaults; it returns the
// algorithms and thread counts to check.
func prepare(cfg Config) (Config, []string, []int, error) {
	topo := cfg.Topology
	if topo == nil {
		return cfg, nil, nil, fmt.Errorf("check: no topology")
	}
	if cfg.Budget < 0 || cfg.SetsLimit < 0 || cfg.SampleTarget < 0 {
		return cfg, nil, nil, fmt.Errorf("check: budget %s, sets limit %d, sample time %s: negative values are not accepted (0 takes the default)", cfg.Budget, cfg.SetsLimit, cfg.SampleTarget)
	}
	if cfg.Budget == 0 {
		cfg.Budget = DefaultBudget
	}
	if cfg.SetsLimit == 0 {
		cfg.SetsLimit = configsets.DefaultLimit
	}
	if cfg.SampleTarget == 0 {
		cfg.SampleTarget = 200 * time.Microsecond
	}
	algs := cfg.Algorithms
	if len(algs) == 0 {
		algs = barriers.Names()
	}
	for i, a := range algs {
		if _, err := barriers.Lookup(a); err != nil {
			return cfg, nil, nil, err
		}
		if slices.Contains(algs[:i], a) {
			return cfg, nil, nil, fmt.Errorf("algorithm %q is named twice; name each once", a)
		}
	}
	npus := len(topo.PUs())
	threads := slices.Clone(cfg.Threads)
	if len(threads) == 0 {
		threads = DefaultThreadCounts(npus)
	}
	limit := max(MaxThreads, 4*npus)
	for _, t := range threads {
		if t < 1 || t > limit {
			return cfg, nil, nil, fmt.Errorf("thread count %d: want 1 to %d", t, limit)
		}
	}
	// Each thread count once: a file with one twice is unreadable.
	slices.Sort(threads)
	threads = slices.Compact(threads)
	allowed, err := osal.Allowed()
	if err != nil {
		return cfg, nil, nil, err
	}
	if !topo.Allowed().SubsetOf(allowed) {
		return cfg, nil, nil, fmt.Errorf("the topology's CPUs %s are not all allowed for this process (allowed: %s); the check runs on the live machine", topo.Allowed(), allowed)
	}
	return cfg, algs, threads, nil
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

// makePlan chooses placements and samples, cutting to fit the budget:
// first repetitions (down to MinSamples), then placements per thread count
// (down to 1), then thread counts (largest first).
func makePlan(topo *hwtree.Topology, threads []int, done map[int]bool, cfg Config, cands int, floors bool) (*plan, error) {
	p := &plan{samples: DefaultSamples}
	if floors && runtime.GOMAXPROCS(0) >= 2 {
		p.floors, p.levels = floorPairs(topo)
	} else if floors {
		// One P cannot ping-pong: measure what can run (oversubscribed
		// placements) without the floor.
		p.cuts = append(p.cuts, "no core-to-core floor: GOMAXPROCS is 1")
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

// setLabel is a placement's label, or its config string.
func setLabel(set configsets.Set) string {
	if set.Label == "" {
		return set.Config
	}
	return set.Label
}
