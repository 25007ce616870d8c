package check

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/measure"
	"github.com/barriertune/barriertune/model"
	"github.com/barriertune/barriertune/results"
)

// Calibration: before pruning the later thread counts, the check fits the
// default model's per-signal overhead and contention to what its first
// round measured on the first thread count (every candidate, every
// placement), over the latencies of the floors it measured, so that
// pruning uses this machine's numbers. The fit is recorded in the file
// (results.File.Calibration); a simulated check replaying the file
// (Config.Calibration, the file's latencies as costs) ranks as the live
// one did.

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
	prm, points, desc := fitParams(p, s, costs)
	p.params = prm
	p.calib = &results.Calibration{Model: string(p.kind), Params: paramsMap(prm), FittedOn: desc, Points: points}
	s.calibration = p.calib
	if p.pruning {
		p.costs = costs
		_ = p.prune(1) // the units were pruned with the same code before; an error here leaves them as they were
	}
}

// point is one measurement the fit uses: measured minus the critical
// path, over the stages, and the contention terms Σk and Σk².
type point struct{ y, stages, k1, k2 float64 }

// fitParams fits SignalOverheadNs (and, when the measurements separate
// them, ContentionNs and ContentionGrowthNs) by least squares; the other
// constants keep their defaults.
func fitParams(p *plan, s *samples, costs model.Costs) (model.Params, int, string) {
	prm := model.DefaultParams()
	u := p.units[0]
	var pts []point
	minFloor := math.Inf(1)
	for _, f := range s.floors {
		minFloor = min(minFloor, f.MedianNs)
	}
	for si, set := range u.sets {
		if duplicates(set.CPUs) {
			continue
		}
		for _, r := range s.pooled[key{0, si}] {
			if r.Dropped || len(r.Samples) == 0 || r.Algorithm == "hybrid" || blocking(r.Algorithm) {
				continue
			}
			pat, err := model.PatternOf(r.Algorithm, len(set.CPUs), r.FanIn)
			if err != nil || len(pat) == 0 {
				continue
			}
			pt := point{y: medianOf(r.Samples) - model.CriticalPath(pat, set.CPUs, costs)}
			for _, st := range pat {
				if len(st) > 0 {
					pt.stages++
				}
				if r.Algorithm == "central" || r.Algorithm == "combining" {
					in := map[int]int{}
					most := 0
					for _, sg := range st {
						in[sg.To]++
						most = max(most, in[sg.To])
					}
					k := float64(most - 1)
					pt.k1 += k
					pt.k2 += k * k
				}
			}
			if pt.stages > 0 {
				pts = append(pts, pt)
			}
		}
	}
	if len(pts) == 0 {
		return prm, 0, "defaults: nothing to fit on"
	}
	distinct := map[float64]bool{}
	for _, pt := range pts {
		if pt.k1 > 0 {
			distinct[pt.k1] = true
		}
	}
	fitted := "signal overhead"
	if x, ok := solve3(pts); ok && len(distinct) >= 2 && x[1] >= 0 && x[2] >= 0 {
		prm.SignalOverheadNs, prm.ContentionNs, prm.ContentionGrowthNs = x[0], x[1], x[2]
		fitted = "signal overhead and contention"
	} else {
		var num, den float64
		for _, pt := range pts {
			num += pt.stages * (pt.y - pt.k1*prm.ContentionNs - pt.k2*prm.ContentionGrowthNs)
			den += pt.stages * pt.stages
		}
		prm.SignalOverheadNs = num / den
	}
	// A latency must stay positive: the overhead is added to every signal.
	if !math.IsInf(minFloor, 0) {
		prm.SignalOverheadNs = max(prm.SignalOverheadNs, -minFloor/2)
	} else {
		prm.SignalOverheadNs = max(prm.SignalOverheadNs, 0)
	}
	prm.SignalOverheadNs = math.Round(prm.SignalOverheadNs*10) / 10
	prm.ContentionNs = math.Round(prm.ContentionNs*10) / 10
	prm.ContentionGrowthNs = math.Round(prm.ContentionGrowthNs*100) / 100
	return prm, len(pts), fmt.Sprintf("%s fitted to %d measurements of the first round at %d threads", fitted, len(pts), u.threads)
}

// solve3 is the least-squares fit of y on (stages, k1, k2): the normal
// equations solved by Cramer's rule; ok is false when they are singular.
func solve3(pts []point) ([3]float64, bool) {
	var a [3][3]float64
	var b [3]float64
	for _, pt := range pts {
		v := [3]float64{pt.stages, pt.k1, pt.k2}
		for i := range 3 {
			for j := range 3 {
				a[i][j] += v[i] * v[j]
			}
			b[i] += v[i] * pt.y
		}
	}
	det := func(m [3][3]float64) float64 {
		return m[0][0]*(m[1][1]*m[2][2]-m[1][2]*m[2][1]) - m[0][1]*(m[1][0]*m[2][2]-m[1][2]*m[2][0]) + m[0][2]*(m[1][0]*m[2][1]-m[1][1]*m[2][0])
	}
	d := det(a)
	if math.Abs(d) < 1e-9 {
		return [3]float64{}, false
	}
	var x [3]float64
	for c := range 3 {
		m := a
		for r := range 3 {
			m[r][c] = b[r]
		}
		x[c] = det(m) / d
	}
	return x, true
}

// blocking reports whether alg is a blocking baseline (wake-ups, not
// signals, dominate it).
func blocking(alg string) bool { return alg == "cond" || alg == "channel" || alg == "goroutine" }

func medianOf(v []float64) float64 { return measure.Median(v) }

// paramsMap is prm by its JSON names, for results.Calibration.
func paramsMap(prm model.Params) map[string]float64 {
	b, _ := json.Marshal(prm)
	var m map[string]float64
	_ = json.Unmarshal(b, &m)
	return m
}

// paramsFrom is the model's constants recorded in c: the defaults, with
// every constant c names replaced.
func paramsFrom(c *results.Calibration) model.Params {
	prm := model.DefaultParams()
	if c == nil || len(c.Params) == 0 {
		return prm
	}
	b, err := json.Marshal(c.Params)
	if err == nil {
		_ = json.Unmarshal(b, &prm)
	}
	return prm
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
