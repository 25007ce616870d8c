package check

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/configsets"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/model"
)

// Planning at scale (issue 9 item 5): before measuring anything, predict
// every candidate on every placement with the cost model, keep the best few
// per thread count plus two baselines, and choose which thread counts the
// budget can measure; every other count gets an entry inferred by
// InferenceRule.

// Planning defaults.
const (
	// DefaultKeep is how many predicted-best candidates per thread count
	// the pruned plan measures, besides the baselines.
	DefaultKeep = 3
	// DefaultScaleBudget is the pruned plan's measuring budget: a few
	// minutes, what a person accepts at install time.
	DefaultScaleBudget = 3 * time.Minute
	// MaxPlanPUs caps the machines the planner accepts.
	MaxPlanPUs = 4096
)

// Baselines are measured at every measured thread count whatever the model
// predicts, so that a wrong model is caught against known quantities.
var Baselines = []string{"central", "dissemination"}

// InferenceRule is written into plans and results files for every thread
// count that is not measured.
const InferenceRule = "not measured: the winner of the nearest measured thread count below or above " +
	"(whichever the model predicts faster at this count's compact placement; below on a tie), " +
	"on this count's compact placement"

// ScaleConfig describes a plan. Zero values take the defaults.
type ScaleConfig struct {
	// Topology is the tree to place threads on.
	Topology *hwtree.Topology
	// Costs are the latencies the model predicts with (default: the
	// tree's typical latencies, model.NewTreeCosts).
	Costs model.Costs
	// Model is the cost model (default model.CriticalPathModel).
	Model model.Kind
	// Keep is how many predicted-best candidates are measured per thread
	// count besides Baselines (default DefaultKeep).
	Keep int
	// Exhaustive measures every algorithm at every thread count, with no
	// budget.
	Exhaustive bool
	// Budget bounds the measuring time of the pruned plan (default
	// DefaultScaleBudget).
	Budget time.Duration
	// SetsLimit is the most placements per thread count (default
	// configsets.DefaultLimit).
	SetsLimit int
	// SampleTarget is the duration of one sample (default 200µs).
	SampleTarget time.Duration
}

// ScalePlan is what the check would measure on a machine: one entry per
// thread count from 2 to the number of PUs.
type ScalePlan struct {
	PUs             int        `json:"pus"`
	Model           model.Kind `json:"model"`
	Exhaustive      bool       `json:"exhaustive"`
	BudgetS         float64    `json:"budget_s"`
	EstimatedTotalS float64    `json:"estimated_total_s"`
	Measured        int        `json:"measured_counts"`
	Inferred        int        `json:"inferred_counts"`
	Measurements    int        `json:"measurements"`
	Cost            TuningCost `json:"tuning_cost"`
	// Latency is the per-level latency the model predicts with.
	Latency []LevelLatency `json:"latency"`
	Rule    string         `json:"rule"`
	Plan    []ScaleEntry   `json:"plan"`
}

// TuningCost compares what tuning the machine takes three ways, in
// measurements (one candidate on one placement) and estimated seconds.
type TuningCost struct {
	// Pruned: this plan's measurements (the exhaustive ones with
	// Exhaustive set).
	Pruned  int     `json:"pruned"`
	PrunedS float64 `json:"pruned_s"`
	// Exhaustive: every candidate (each fan-in, and the hybrid) on every
	// representative placement of every thread count.
	Exhaustive  int     `json:"exhaustive"`
	ExhaustiveS float64 `json:"exhaustive_s"`
	// Paper: the paper's method, every configuration set it counts
	// (configsets.PaperCounts) for every thread count, times the catalog's
	// algorithms; decimal, since it can exceed any integer type.
	Paper  string  `json:"paper"`
	PaperS float64 `json:"paper_s"`
}

// ScaleEntry is one thread count of a plan.
type ScaleEntry struct {
	Threads int `json:"threads"`
	// Source is "measured" or "inferred".
	Source string `json:"source"`
	// InferredFrom are the measured thread counts an inferred entry is
	// chosen from (below, above).
	InferredFrom []int `json:"inferred_from,omitempty"`
	// Placements are the placements' labels (configsets), in order.
	Placements []string `json:"placements"`
	// CPUs are the placements' CPUs, in the order of Placements.
	CPUs [][]int `json:"cpus"`
	// Algorithms are the candidates kept, predicted best first.
	Algorithms []string `json:"algorithms"`
	// Why says why each kept candidate is kept, in the order of Algorithms.
	Why []string `json:"why"`
	// Pruned lists every other candidate with its prediction.
	Pruned []string `json:"pruned,omitempty"`
	// Composition is the hybrid's predicted composition on the best
	// placement, when the hybrid is a candidate.
	Composition string `json:"composition,omitempty"`
	// PredictedWinner and PredictedNs are the model's best candidate and
	// its predicted episode time.
	PredictedWinner string  `json:"predicted_winner"`
	PredictedNs     float64 `json:"predicted_ns"`
	// EstimatedS is the measuring time of this entry (0 when inferred).
	EstimatedS float64 `json:"estimated_s"`

	preds                []prediction // every candidate, best first
	placementsConsidered int          // representatives predicted on
	configs              []string     // the placements' configsets descriptions
	hybridAny            prediction   // the hybrid's best, degenerate (flat) compositions included
}

// prediction is one candidate's best predicted time over the placements.
type prediction struct {
	name        string // algorithm, with "(k)" for a fan-in
	alg         string
	fanIn       int
	ns          float64
	placement   int // index of its best placement
	composition string
}

// PlanScale makes the plan. It measures nothing.
func PlanScale(cfg ScaleConfig) (*ScalePlan, error) {
	topo := cfg.Topology
	if topo == nil {
		return nil, fmt.Errorf("plan: no topology")
	}
	npus := len(topo.PUs())
	if npus < 2 || npus > MaxPlanPUs {
		return nil, fmt.Errorf("plan: the topology has %d PUs (accepted: 2..%d)", npus, MaxPlanPUs)
	}
	if cfg.Keep < 0 || cfg.SetsLimit < 0 || cfg.Budget < 0 || cfg.SampleTarget < 0 {
		return nil, fmt.Errorf("plan: negative keep %d, sets limit %d, budget %s or sample target %s (want 0 for the default, or positive)",
			cfg.Keep, cfg.SetsLimit, cfg.Budget, cfg.SampleTarget)
	}
	if cfg.Keep == 0 {
		cfg.Keep = DefaultKeep
	}
	if cfg.SetsLimit == 0 {
		cfg.SetsLimit = configsets.DefaultLimit
	}
	if cfg.Budget == 0 {
		cfg.Budget = DefaultScaleBudget
	}
	if cfg.SampleTarget == 0 {
		cfg.SampleTarget = 200 * time.Microsecond
	}
	if cfg.Model == "" {
		cfg.Model = model.CriticalPathModel
	}
	if cfg.Costs == nil {
		cfg.Costs = model.NewTreeCosts(topo)
	}
	space := configsets.NewSpace(topo)
	all := allCandidates()
	p := &ScalePlan{PUs: npus, Model: cfg.Model, Exhaustive: cfg.Exhaustive, BudgetS: cfg.Budget.Seconds(), Rule: InferenceRule,
		Latency: levelLatencies(topo, cfg.Costs)}
	p.Plan = make([]ScaleEntry, npus-1)
	for t := 2; t <= npus; t++ {
		sets, err := space.Representatives(t, cfg.SetsLimit)
		if err != nil {
			return nil, err
		}
		e := &p.Plan[t-2]
		e.Threads = t
		e.placementsConsidered = len(sets)
		for _, s := range sets {
			label := s.Label
			if label == "" {
				label = s.Config
			}
			e.Placements = append(e.Placements, label)
			e.CPUs = append(e.CPUs, s.CPUs)
			e.configs = append(e.configs, s.Config)
		}
	}
	// Predictions are independent per thread count: spread them over the
	// CPUs.
	if err := parallel(len(p.Plan), func(i int) error {
		e := &p.Plan[i]
		var err error
		if e.preds, e.hybridAny, err = predictAll(cfg, topo, all, e.CPUs); err != nil {
			return fmt.Errorf("plan, %d threads: %w", e.Threads, err)
		}
		keep(e, cfg)
		return nil
	}); err != nil {
		return nil, err
	}
	per := perMeasurement(cfg.SampleTarget)
	cost := func(e *ScaleEntry) time.Duration {
		// One floor run per placement beside the candidates, as
		// measure.Barriers does with Floor set.
		return time.Duration(len(e.Placements)*(len(e.Algorithms)+1)) * per
	}
	chosen := map[int]bool{}
	var total time.Duration
	for _, t := range measureOrder(topo, npus) {
		e := &p.Plan[t-2]
		c := cost(e)
		if !cfg.Exhaustive && total+c > cfg.Budget && len(chosen) > 0 {
			continue
		}
		chosen[t] = true
		total += c
	}
	for i := range p.Plan {
		e := &p.Plan[i]
		if chosen[e.Threads] {
			e.Source = "measured"
			e.EstimatedS = round3(cost(e).Seconds())
			p.Measured++
			p.Measurements += len(e.Placements) * len(e.Algorithms)
			continue
		}
		e.Source = "inferred"
		e.InferredFrom = neighbours(chosen, e.Threads, npus)
		e.Placements, e.CPUs, e.configs = e.Placements[:1], e.CPUs[:1], e.configs[:1]
		e.Why = []string{InferenceRule}
		e.Algorithms = []string{}
		p.Inferred++
	}
	p.EstimatedTotalS = round3(total.Seconds())
	p.Cost = tuningCost(p, space, len(all)+1, len(barriers.Names()), per)
	return p, nil
}

// tuningCost fills TuningCost: cands is the candidates of the exhaustive
// plan, algs the catalog's size.
func tuningCost(p *ScalePlan, space *configsets.Space, cands, algs int, per time.Duration) TuningCost {
	c := TuningCost{Pruned: p.Measurements, PrunedS: p.EstimatedTotalS}
	for _, e := range p.Plan {
		c.Exhaustive += e.placementsConsidered * cands
	}
	c.ExhaustiveS = round3(float64(c.Exhaustive) * per.Seconds())
	counts := space.PaperCounts()
	sum := new(big.Int)
	for t := 2; t < len(counts) && t <= p.PUs; t++ {
		sum.Add(sum, counts[t])
	}
	sum.Mul(sum, big.NewInt(int64(algs)))
	c.Paper = sum.String()
	s, _ := new(big.Float).Mul(new(big.Float).SetInt(sum), big.NewFloat(per.Seconds())).Float64()
	c.PaperS = round3(s)
	return c
}

// perMeasurement is what one candidate on one placement costs the check:
// its samples plus about eight calibration samples, and half again for
// teams, skew and calibration (the check's own estimate).
func perMeasurement(target time.Duration) time.Duration {
	return time.Duration(DefaultSamples+8) * target * 3 / 2
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// allCandidates are the catalog's algorithms with every fan-in the model
// tries; the hybrid is added per placement.
func allCandidates() []prediction {
	var out []prediction
	for _, a := range barriers.Algorithms() {
		if a.Name == "hybrid" {
			continue
		}
		if model.TakesFanIn(a.Name) {
			for _, k := range model.FanInCandidates() {
				out = append(out, prediction{name: fmt.Sprintf("%s(%d)", a.Name, k), alg: a.Name, fanIn: k})
			}
			continue
		}
		out = append(out, prediction{name: a.Name, alg: a.Name})
	}
	return out
}

// predictAll predicts every candidate and the hybrid on every placement
// and returns them best first (NaN for candidates the model cannot
// predict, such as the blocking baselines, last).
func predictAll(cfg ScaleConfig, topo *hwtree.Topology, cands []prediction, placements [][]int) ([]prediction, prediction, error) {
	out := slices.Clone(cands)
	for i := range out {
		out[i].ns = math.NaN()
	}
	hy := prediction{name: "hybrid", alg: "hybrid", ns: math.NaN()}
	hyAny := hy // the hybrid's best including placements where it degenerates to flat
	flatNS := make([]float64, len(out))
	for pi, cpus := range placements {
		for i := range out {
			flatNS[i] = math.NaN()
			ns, err := model.Predict(cfg.Model, out[i].alg, cpus, cfg.Costs, out[i].fanIn)
			if err != nil {
				continue
			}
			flatNS[i] = ns
			if math.IsNaN(out[i].ns) || ns < out[i].ns {
				out[i].ns, out[i].placement = ns, pi
			}
		}
		levels, err := model.TreeLevels(topo, cpus)
		if err != nil {
			return nil, hy, err
		}
		flat := -1 // the best flat candidate on this placement
		for i := range cands {
			if v := flatNS[i]; !math.IsNaN(v) && (flat < 0 || v < flatNS[flat]) {
				flat = i
			}
		}
		if flat < 0 {
			continue
		}
		comp, ns, err := model.HybridAgainst(cfg.Model, levels, cpus, cfg.Costs, out[flat].alg, out[flat].fanIn, flatNS[flat])
		if err != nil {
			return nil, hy, err
		}
		if comp.Flat() == "" && (math.IsNaN(hy.ns) || ns < hy.ns) {
			hy.ns, hy.placement, hy.composition = ns, pi, comp.String()
		}
		if math.IsNaN(hyAny.ns) || ns < hyAny.ns {
			hyAny.ns, hyAny.placement, hyAny.composition = ns, pi, comp.String()
		}
	}
	if !math.IsNaN(hy.ns) {
		out = append(out, hy)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].ns, out[j].ns
		if math.IsNaN(a) || math.IsNaN(b) {
			return !math.IsNaN(a) && math.IsNaN(b)
		}
		return a < b
	})
	return out, hyAny, nil
}

// keep fills Algorithms, Why and Pruned from the predictions: the best
// cfg.Keep distinct algorithms (one fan-in each, the best), then the
// baselines; everything with Exhaustive.
func keep(e *ScaleEntry, cfg ScaleConfig) {
	if len(e.preds) > 0 && !math.IsNaN(e.preds[0].ns) {
		e.PredictedWinner, e.PredictedNs = e.preds[0].name, round3(e.preds[0].ns)
		if e.preds[0].alg == "hybrid" {
			e.Composition = e.preds[0].composition
		}
	}
	best := e.PredictedNs
	kept := map[string]bool{}
	add := func(p prediction, why string) {
		e.Algorithms = append(e.Algorithms, p.name)
		e.Why = append(e.Why, why)
		kept[p.name] = true
		if p.alg == "hybrid" && e.Composition == "" {
			e.Composition = p.composition
		}
	}
	algsKept := map[string]bool{}
	for _, p := range e.preds {
		switch {
		case cfg.Exhaustive:
			add(p, "exhaustive")
		case math.IsNaN(p.ns):
		case len(algsKept) < cfg.Keep && !algsKept[p.alg]:
			algsKept[p.alg] = true
			add(p, fmt.Sprintf("predicted %d of the best %d: %.0f ns", len(algsKept), cfg.Keep, p.ns))
		}
	}
	if !cfg.Exhaustive {
		for _, b := range Baselines {
			if algsKept[b] {
				continue
			}
			for _, p := range e.preds {
				if p.alg == b {
					add(p, fmt.Sprintf("baseline: %s", describeNS(p.ns, best)))
					algsKept[b] = true
					break
				}
			}
		}
	}
	for _, p := range e.preds {
		if kept[p.name] {
			continue
		}
		if math.IsNaN(p.ns) {
			e.Pruned = append(e.Pruned, p.name+": not modelled (blocking baseline, never faster while threads fit the CPUs)")
			continue
		}
		e.Pruned = append(e.Pruned, p.name+": "+describeNS(p.ns, best))
	}
}

func describeNS(ns, best float64) string {
	if math.IsNaN(ns) {
		return "not modelled"
	}
	if best > 0 {
		return fmt.Sprintf("predicted %.0f ns, %.2fx the best", ns, ns/best)
	}
	return fmt.Sprintf("predicted %.0f ns", ns)
}

// measureOrder is the order in which thread counts get measuring budget:
// 2..8, the powers of two and all PUs, the sizes of the tree's groups and
// their multiples (where a level fills up), then the midpoints of the
// widest gaps left, repeatedly, until every count is listed.
func measureOrder(topo *hwtree.Topology, npus int) []int {
	var out []int
	seen := map[int]bool{}
	add := func(t int) {
		if t >= 2 && t <= npus && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for t := 2; t <= min(8, npus); t++ {
		add(t)
	}
	for t := 16; t < npus; t *= 2 {
		add(t)
	}
	add(npus)
	if levels, err := model.TreeLevels(topo, topo.CPUs()); err == nil {
		for _, lk := range levels {
			size := groupSize(lk.Keys)
			for m := size; m < npus; m += size {
				add(m)
			}
		}
	}
	for len(out) < npus-1 {
		sorted := slices.Clone(out)
		slices.Sort(sorted)
		bestGap, at := 0, 0
		prev := 1
		for _, t := range append(sorted, npus+1) {
			if gap := t - prev; gap > bestGap {
				bestGap, at = gap, prev
			}
			prev = t
		}
		if bestGap < 2 {
			break
		}
		add(at + bestGap/2)
	}
	return out
}

// groupSize is the size of the first group of a level.
func groupSize(keys []int) int {
	n := 0
	for _, k := range keys {
		if k == keys[0] {
			n++
		}
	}
	return n
}

// neighbours returns the nearest chosen counts below and above t (each
// only when it exists).
func neighbours(chosen map[int]bool, t, npus int) []int {
	var out []int
	for b := t - 1; b >= 2; b-- {
		if chosen[b] {
			out = append(out, b)
			break
		}
	}
	for a := t + 1; a <= npus; a++ {
		if chosen[a] {
			out = append(out, a)
			break
		}
	}
	return out
}

// Text writes the plan for people: one line per thread count.
func (p *ScalePlan) Text() string {
	var b strings.Builder
	mode := "pruned"
	if p.Exhaustive {
		mode = "exhaustive"
	}
	fmt.Fprintf(&b, "%d PUs, %s plan, model %s: %d thread counts measured, %d inferred, %d measurements, about %s\n",
		p.PUs, mode, p.Model, p.Measured, p.Inferred, p.Measurements, time.Duration(p.EstimatedTotalS*float64(time.Second)).Round(time.Second))
	b.WriteString("latency by level:")
	for _, l := range p.Latency {
		fmt.Fprintf(&b, " %s %.1f ns (%d pairs);", l.Level, l.MedianNs, l.Pairs)
	}
	b.WriteString("\n")
	for _, e := range p.Plan {
		if e.Source == "inferred" {
			fmt.Fprintf(&b, "%4d  inferred from %v  (predicted winner %s, %.0f ns)\n", e.Threads, e.InferredFrom, e.PredictedWinner, e.PredictedNs)
			continue
		}
		fmt.Fprintf(&b, "%4d  %d placements (%s)  measure %s  ~%.1fs  (predicted winner %s, %.0f ns",
			e.Threads, len(e.Placements), strings.Join(e.Placements, "; "), strings.Join(e.Algorithms, ", "), e.EstimatedS, e.PredictedWinner, e.PredictedNs)
		if e.Composition != "" {
			fmt.Fprintf(&b, "; hybrid %s", e.Composition)
		}
		b.WriteString(")\n")
	}
	fmt.Fprintf(&b, "inferred counts: %s\n", p.Rule)
	return b.String()
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
