package check

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/results"
)

// Calibration: before pruning the later thread counts, the check fits the
// default model's constants (model.Fit: bounded, no cost negative, squared
// log-ratio loss) to what its first round measured on the first thread
// count (every candidate, every placement, the blocking baselines
// included), over the latencies of the floors it measured, so that
// pruning uses this machine's numbers. When a live check ends it fits
// them again to every measurement it made (FitFile: all thread counts,
// all algorithms, the counts above the CPUs) and records that fit and its
// residuals in the file (results.File.Calibration); a simulated check
// replaying the file (Config.Calibration, the file's latencies as costs)
// predicts with it.

// calibrate fits the model to unit 0's first round and, when the plan
// prunes, prunes the later units again with the fitted model.
func (s *samples) calibrate(p *plan, composer *hybridComposer, cfg Config) {
	if len(p.units) == 0 {
		return
	}
	if composer.costs == nil {
		composer.costs = model.NewTreeCostsFrom(composer.topo, composer.byLevel)
	}
	costs := composer.costs
	var obs []model.Observation
	u := p.units[0]
	for si, set := range u.sets {
		for _, r := range s.pooled[key{0, si}] {
			if len(r.Samples) == 0 {
				continue
			}
			if o, ok := observation(r.Algorithm, r.Composition, r.Policy, r.FanIn, set.CPUs, medianOf(r.Samples)); ok {
				obs = append(obs, o)
			}
		}
	}
	fit := model.Fit(thinObservations(obs), costs, model.DefaultParams())
	p.params = fit.Params
	p.calib = calibrationOf(p.kind, fit, fmt.Sprintf("the first round at %d threads", u.threads))
	s.calibration = p.calib
	if p.pruning {
		p.costs = costs
		_ = p.prune(1) // the units were pruned with the same code before; an error here leaves them as they were
	}
}

// observation is one measurement as the model's fit takes it: a hybrid
// counts only where it degenerated to a flat algorithm ("flat:ALG").
func observation(alg, composition, policy string, fanIn int, cpus []int, ns float64) (model.Observation, bool) {
	if alg == algname.Hybrid {
		var ok bool
		if alg, fanIn, ok = model.FlatOf(composition); !ok {
			return model.Observation{}, false
		}
	}
	if _, err := model.PatternOf(alg, len(cpus), fanIn); err != nil || !(ns > 0) {
		return model.Observation{}, false
	}
	return model.Observation{Algorithm: alg, FanIn: fanIn, CPUs: cpus, MeasuredNs: ns, Policy: policy}, true
}

// Caps on what a fit predicts, so that its cost stays bounded on big
// machines: at most maxFitPoints measurements and maxFitRanks ranks over
// all of them (every k-th kept, smallest thread counts first).
const (
	maxFitPoints = 96
	maxFitRanks  = 8192
)

// thinObservations keeps at most maxFitPoints observations of at most
// maxFitRanks ranks in all, spread over obs.
func thinObservations(obs []model.Observation) []model.Observation {
	ranks := 0
	for _, o := range obs {
		ranks += len(o.CPUs)
	}
	if len(obs) <= maxFitPoints && ranks <= maxFitRanks {
		return obs
	}
	sorted := slices.Clone(obs)
	slices.SortStableFunc(sorted, func(a, b model.Observation) int { return len(a.CPUs) - len(b.CPUs) })
	keep := min(len(sorted), maxFitPoints)
	for keep > 1 {
		ranks = 0
		for i := range keep {
			ranks += len(sorted[i*len(sorted)/keep].CPUs)
		}
		if ranks <= maxFitRanks {
			break
		}
		keep = keep * 3 / 4
	}
	out := make([]model.Observation, 0, keep)
	for i := range keep {
		out = append(out, sorted[i*len(sorted)/keep])
	}
	return out
}

// calibrationOf records fit as a results.Calibration.
func calibrationOf(kind model.Kind, fit model.Fitted, on string) *results.Calibration {
	c := &results.Calibration{Model: string(kind), Params: paramsMap(fit.Params), Points: len(fit.Residuals)}
	if len(fit.Residuals) == 0 {
		c.FittedOn = "defaults: nothing to fit on in " + on
		return c
	}
	if len(fit.Constants) == 0 {
		c.FittedOn = fmt.Sprintf("defaults: no constant moves the predictions of the %d measurements of %s", len(fit.Residuals), on)
	} else {
		c.FittedOn = fmt.Sprintf("%s fitted to %d measurements of %s", strings.Join(fit.Constants, ", "), len(fit.Residuals), on)
	}
	c.Loss = model.FitLoss
	c.RMSLogRatio = math.Round(fit.RMSLogRatio*1000) / 1000
	c.MinRatio = math.Round(fit.MinRatio*1000) / 1000
	c.MaxRatio = math.Round(fit.MaxRatio*1000) / 1000
	c.Residuals = fit.Residuals
	return c
}

// Observations are every measurement of f the model can predict (the
// hybrid where it degenerated to a flat algorithm), on the CPUs recorded.
func Observations(f *results.File) []model.Observation {
	var obs []model.Observation
	for _, t := range f.Threads {
		if t.Source == results.SourceInferred {
			continue
		}
		for _, m := range t.Measurements {
			if len(m.CPUs) != t.Threads {
				continue
			}
			if o, ok := observation(m.Algorithm, m.Composition, m.Policy, m.FanIn, m.CPUs, m.MedianNs); ok {
				obs = append(obs, o)
			}
		}
	}
	return obs
}

// FitFile fits the default model to every measurement of f (Observations,
// thinned on big machines) on f's latencies over topo (CostsFrom): the fit
// a live check records when it ends, and the one cmd/scripts/modelcheck
// reports.
func FitFile(topo *hwtree.Topology, f *results.File) (model.Fitted, []model.Observation, model.Costs) {
	obs := thinObservations(Observations(f))
	costs := CostsFrom(topo, f)
	return model.Fit(obs, costs, model.DefaultParams()), obs, costs
}

// refit replaces f's calibration with the fit to all its measurements
// (a live check's last step); a file with nothing to fit keeps the first
// round's.
func refit(topo *hwtree.Topology, kind model.Kind, f *results.File) {
	fit, _, _ := FitFile(topo, f)
	if len(fit.Residuals) == 0 {
		return
	}
	counts := map[int]bool{}
	for _, r := range fit.Residuals {
		counts[r.Threads] = true
	}
	var ts []int
	for t := range counts {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	var ss []string
	for _, t := range ts {
		ss = append(ss, fmt.Sprint(t))
	}
	f.Calibration = calibrationOf(kind, fit, "every round at "+strings.Join(ss, ", ")+" threads")
}

func medianOf(v []float64) float64 { return measure.Median(v) }

// paramsMap is prm by its JSON names, for results.Calibration.
func paramsMap(prm model.Params) map[string]float64 {
	b, _ := json.Marshal(prm)
	var m map[string]float64
	_ = json.Unmarshal(b, &m)
	return m
}

// paramsFrom is the model's constants recorded in c: the defaults, with
// every constant c names replaced, brought inside the model's bounds
// (model.Params.Physical: an older file's negative overhead reads as 0).
func paramsFrom(c *results.Calibration) model.Params {
	prm := model.DefaultParams()
	if c == nil || len(c.Params) == 0 {
		return prm
	}
	b, err := json.Marshal(c.Params)
	if err == nil {
		_ = json.Unmarshal(b, &prm)
	}
	return prm.Physical()
}

// ParamsFrom is the model's constants a results file's calibration
// records (the defaults for the constants it does not name).
func ParamsFrom(c *results.Calibration) model.Params { return paramsFrom(c) }

// CostsFrom are the latencies a results file recorded (its floors and
// per-level latencies) on topo's levels, for replaying its check
// (check --simulate --from-results).
func CostsFrom(topo *hwtree.Topology, f *results.File) model.Costs {
	return model.NewTreeCostsFrom(topo, byLevel(f.Floor, f.Latency))
}
