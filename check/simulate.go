package check

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/model"
	"github.com/barriertune/barriertune/results"
)

// Simulation (issue 9 item 6): the whole check - configuration sets,
// pruning, selection, inference and the results file - on the cost model
// instead of measurements, so the pipeline runs for machines we do not
// have.

// SimulateConfig describes a simulated check.
type SimulateConfig struct {
	ScaleConfig
	// Machine names the simulated machine (e.g. the latency file), written
	// into the file's CPU name.
	Machine string
	// Version is the tool version written into the file.
	Version string
}

// Simulate plans as PlanScale does, then "measures" every kept candidate
// on every placement of every measured thread count by its predicted time,
// selects winners as the check does, and fills the inferred thread counts
// by InferenceRule. It returns the results file and the plan.
func Simulate(cfg SimulateConfig) (*results.File, *ScalePlan, error) {
	start := time.Now()
	p, err := PlanScale(cfg.ScaleConfig)
	if err != nil {
		return nil, nil, err
	}
	sc := cfg.ScaleConfig
	if sc.Model == "" {
		sc.Model = model.CriticalPathModel
	}
	if sc.Costs == nil {
		sc.Costs = model.NewTreeCosts(sc.Topology)
	}
	topo := sc.Topology
	f := &results.File{
		Schema:    results.Schema,
		Tool:      results.Tool{Name: "barriertune", Version: cfg.Version},
		Time:      start.UTC().Round(time.Second),
		Machine:   simulatedMachine(topo, cfg.Machine),
		Budget:    time.Duration(p.BudgetS * float64(time.Second)).String(),
		Cuts:      []string{},
		Floor:     []results.Floor{},
		Threads:   []results.Threads{},
		Simulated: true,
	}
	for _, l := range levelLatencies(topo, sc.Costs) {
		f.Latency = append(f.Latency, results.LevelLatency{Level: l.Level, Pairs: l.Pairs, MedianNs: l.MedianNs})
	}
	pairs, levels := floorPairs(topo)
	for i, pr := range pairs {
		ns := sc.Costs.Latency(pr[0], pr[1])
		f.Floor = append(f.Floor, results.Floor{Level: levels[i], CPUs: pr, MedianNs: ns, MinNs: ns, MaxNs: ns})
	}
	if p.Inferred > 0 {
		f.Cuts = append(f.Cuts, fmt.Sprintf("%d of %d thread counts inferred, not measured, to fit the budget of %s: %s",
			p.Inferred, len(p.Plan), f.Budget, InferenceRule))
	}

	// Winners of the measured counts, for the inference below.
	type winner struct {
		alg         string
		fanIn       int
		composition string
	}
	wins := map[int]winner{}
	for i := range p.Plan {
		e := &p.Plan[i]
		if e.Source != "measured" {
			continue
		}
		entry, fanIns, comps, err := simulateEntry(sc, topo, e)
		if err != nil {
			return nil, nil, err
		}
		if entry.Best != nil {
			w := winner{alg: entry.Best.Algorithm, fanIn: fanIns[entry.Best.Algorithm]}
			if w.alg == "hybrid" {
				// The winning measurement's own composition (best copies it):
				// two placements may share a label.
				w.composition = entry.Best.Composition
				if w.composition == "" {
					w.composition = comps[entry.Best.Label]
				}
			}
			entry.Best.Composition, entry.Best.FanIn = w.composition, w.fanIn
			wins[e.Threads] = w
		}
		f.Threads = append(f.Threads, entry)
	}
	for i := range p.Plan {
		e := &p.Plan[i]
		if e.Source != "inferred" {
			continue
		}
		cpus := e.CPUs[0]
		var pick winner
		bestNS := math.Inf(1)
		for _, from := range e.InferredFrom { // below first: it wins ties
			w, ok := wins[from]
			if !ok {
				continue
			}
			ns, err := predictWinner(sc, topo, w.alg, w.fanIn, cpus)
			if err != nil {
				return nil, nil, fmt.Errorf("simulate, %d threads: %w", e.Threads, err)
			}
			if ns < bestNS {
				pick, bestNS = w, ns
			}
		}
		if pick.alg == "" {
			continue
		}
		from := e.InferredFrom[0]
		for _, c := range e.InferredFrom {
			if w, ok := wins[c]; ok && w == pick {
				from = c
				break
			}
		}
		f.Threads = append(f.Threads, results.Threads{
			Threads:      e.Threads,
			Source:       results.SourceInferred,
			InferredFrom: from,
			Rule:         InferenceRule,
			Complete:     true,
			Measurements: []results.Measurement{},
			Best: &results.Choice{Algorithm: pick.alg, Policy: "spin", CPUs: cpus, Label: e.Placements[0], Pinned: true,
				MedianNs: bestNS, CILowNs: bestNS, CIHighNs: bestNS, Composition: pick.composition, FanIn: pick.fanIn},
		})
	}
	sortThreads(f.Threads)
	return f, p, nil
}

// simulateEntry predicts every kept candidate on every placement of e and
// selects as the check does. It returns the entry, the fan-in of each
// algorithm and the hybrid's composition per placement label.
func simulateEntry(sc ScaleConfig, topo *hwtree.Topology, e *ScaleEntry) (results.Threads, map[string]int, map[string]string, error) {
	entry := results.Threads{Threads: e.Threads, Source: results.SourceMeasured, Complete: true, Measurements: []results.Measurement{}}
	fanIns := map[string]int{}
	comps := map[string]string{}
	seen := map[string]bool{}
	for _, name := range e.Algorithms {
		var pr *prediction
		for i := range e.preds {
			if e.preds[i].name == name {
				pr = &e.preds[i]
				break
			}
		}
		if pr == nil || seen[pr.alg] {
			continue // not modelled, or a worse fan-in of an algorithm kept already
		}
		seen[pr.alg] = true
		fanIns[pr.alg] = pr.fanIn
		for pi, cpus := range e.CPUs {
			ns, comp, err := predictOn(sc, topo, pr.alg, pr.fanIn, cpus)
			if err != nil {
				return entry, nil, nil, fmt.Errorf("simulate, %d threads: %w", e.Threads, err)
			}
			if math.IsNaN(ns) {
				continue
			}
			m := results.Measurement{
				Algorithm: pr.alg, Policy: "spin", Label: e.Placements[pi], Config: e.configs[pi], CPUs: cpus, Pinned: true,
				MedianNs: ns, MinNs: ns, MaxNs: ns, CILowNs: ns, CIHighNs: ns, Reps: DefaultSamples, PredictedNs: ns,
			}
			if comp.Levels != nil {
				// The groups too, so that barriers.Auto rebuilds exactly this
				// hybrid from a simulated file, as from a measured one.
				comps[e.Placements[pi]] = comp.String()
				m.Composition = comp.String()
				if keys, err := barriers.HierarchyKeys(comp.Levels, len(cpus)); err == nil {
					m.LevelKeys = keys
				}
			}
			entry.Measurements = append(entry.Measurements, m)
		}
	}
	entry.Best = best(entry.Measurements, nil)
	entry.Robust = robust(entry.Measurements)
	return entry, fanIns, comps, nil
}

// predictOn predicts alg on cpus; for the hybrid it composes greedily and
// returns the composition (the best flat algorithm's time when no level
// pays, so the hybrid never predicts worse than flat).
func predictOn(sc ScaleConfig, topo *hwtree.Topology, alg string, fanIn int, cpus []int) (float64, model.Composition, error) {
	if alg != "hybrid" {
		ns, err := model.Predict(sc.Model, alg, cpus, sc.Costs, fanIn)
		if err != nil {
			return math.NaN(), model.Composition{}, nil
		}
		return ns, model.Composition{}, nil
	}
	levels, err := model.TreeLevels(topo, cpus)
	if err != nil {
		return 0, model.Composition{}, err
	}
	comp, ns, err := model.Hybrid(sc.Model, levels, cpus, sc.Costs)
	if err != nil {
		return 0, model.Composition{}, err
	}
	return ns, comp, nil
}

func predictWinner(sc ScaleConfig, topo *hwtree.Topology, alg string, fanIn int, cpus []int) (float64, error) {
	ns, _, err := predictOn(sc, topo, alg, fanIn, cpus)
	if err == nil && math.IsNaN(ns) {
		return math.Inf(1), nil
	}
	return ns, err
}

// simulatedMachine fingerprints the simulated machine: its tree, and a CPU
// name saying it was simulated, so that no library takes it for this one.
func simulatedMachine(topo *hwtree.Topology, name string) results.Machine {
	m := results.Machine{
		CPU:          results.CPUIdentity{Name: "simulated: " + name},
		TopologyHash: topo.CanonicalHash(),
		AllowedCPUs:  topo.Allowed().String(),
		GoVersion:    runtime.Version(),
		GOMAXPROCS:   len(topo.PUs()),
		Tree:         LightTree(topo), // show/export select inside subsets of it
	}
	if s, err := topo.Synthetic(); err == nil {
		m.Topology = s
	} else {
		m.Topology = "canonical:" + m.TopologyHash
	}
	return m
}

func sortThreads(ts []results.Threads) {
	slices.SortFunc(ts, func(a, b results.Threads) int { return a.Threads - b.Threads })
}
