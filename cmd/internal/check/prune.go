package check

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/results"
)

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
