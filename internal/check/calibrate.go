package check

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/measure"
	"github.com/barriertune/barriertune/internal/model"
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

// maxFitPoints caps the measurements the calibration fits to.
const maxFitPoints = 24

// point is one measurement the fit uses: a flat spinning candidate on a
// placement of the first thread count, and its measured median.
type point struct {
	alg   string
	fanIn int
	cpus  []int
	y     float64
}

// fitParams fits the default model's per-signal overhead and its two
// line-transfer fractions (model.Params.FlagRefetchFraction and
// CounterTransferFraction) to the first round by least squares over the
// model's own predictions (model.PredictWith), so the fit follows the
// model as it is written rather than a copy of its terms: coordinate
// descent, a bounded search on each constant in turn, three passes. A
// constant the measurements cannot move (no candidate's prediction
// depends on it, as at 2 threads) keeps its default, and the description
// says which constants were fitted.
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
			if _, err := model.PatternOf(r.Algorithm, len(set.CPUs), r.FanIn); err != nil {
				continue
			}
			pts = append(pts, point{alg: r.Algorithm, fanIn: r.FanIn, cpus: set.CPUs, y: medianOf(r.Samples)})
		}
	}
	if len(pts) == 0 {
		return prm, 0, "defaults: nothing to fit on"
	}
	if len(pts) > maxFitPoints { // every k-th: the fit's cost stays bounded on big machines
		thin := make([]point, 0, maxFitPoints)
		for i := range maxFitPoints {
			thin = append(thin, pts[i*len(pts)/maxFitPoints])
		}
		pts = thin
	}
	sse := func(q model.Params) float64 {
		e := 0.0
		for _, pt := range pts {
			v, err := model.PredictWith(model.DefaultModel, pt.alg, pt.cpus, costs, pt.fanIn, q)
			if err != nil {
				return math.Inf(1)
			}
			e += (v - pt.y) * (v - pt.y)
		}
		return e
	}
	lowOverhead := 0.0
	if !math.IsInf(minFloor, 0) {
		lowOverhead = -minFloor / 2 // a latency must stay positive
	}
	highOverhead := 1000.0
	if !math.IsInf(minFloor, 0) {
		highOverhead = max(highOverhead, 4*minFloor)
	}
	type knob struct {
		name     string
		at       func(*model.Params) *float64
		lo, hi   float64
		resolves float64 // rounding of the fitted value
	}
	knobs := []knob{
		{"signal overhead", func(q *model.Params) *float64 { return &q.SignalOverheadNs }, lowOverhead, highOverhead, 0.1},
		{"flag refetch", func(q *model.Params) *float64 { return &q.FlagRefetchFraction }, 0, 1, 0.01},
		{"counter transfer", func(q *model.Params) *float64 { return &q.CounterTransferFraction }, 0, 1, 0.01},
	}
	// A knob moves the fit only when some prediction depends on it.
	var fitted []string
	var live []knob
	for _, k := range knobs {
		lo, hi := prm, prm
		*k.at(&lo), *k.at(&hi) = k.lo, k.hi
		if sse(lo) != sse(hi) {
			live = append(live, k)
			fitted = append(fitted, k.name)
		}
	}
	// The fractions trade off against the overhead along a valley: start
	// the descent from the best point of a coarse joint grid over the live
	// fractions (the overhead minimised at each), then refine.
	var fracs []knob
	var over *knob
	for i := range live {
		if live[i].name == "signal overhead" {
			over = &live[i]
		} else {
			fracs = append(fracs, live[i])
		}
	}
	if len(fracs) > 0 {
		bestE, start := math.Inf(1), prm
		var walk func(i int, q model.Params)
		walk = func(i int, q model.Params) {
			if i == len(fracs) {
				if over != nil {
					*over.at(&q) = minimise(func(x float64) float64 {
						r := q
						*over.at(&r) = x
						return sse(r)
					}, over.lo, over.hi, 1)
				}
				if e := sse(q); e < bestE {
					bestE, start = e, q
				}
				return
			}
			for x := 0.0; x <= 1+1e-9; x += 0.1 {
				*fracs[i].at(&q) = x
				walk(i+1, q)
			}
		}
		walk(0, prm)
		prm = start
	}
	for range 4 {
		for _, k := range live {
			*k.at(&prm) = minimise(func(x float64) float64 {
				q := prm
				*k.at(&q) = x
				return sse(q)
			}, k.lo, k.hi, k.resolves)
		}
	}
	for _, k := range live {
		v := k.at(&prm)
		*v = math.Round(*v/k.resolves) * k.resolves
	}
	if len(fitted) == 0 {
		return prm, len(pts), fmt.Sprintf("defaults: no constant moves the predictions of the %d measurements of the first round at %d threads", len(pts), u.threads)
	}
	return prm, len(pts), fmt.Sprintf("%s fitted to %d measurements of the first round at %d threads", strings.Join(fitted, ", "), len(pts), u.threads)
}

// minimise returns an x in [lo, hi] where f is least: a grid of 41 points,
// then golden-section search around the best of them down to tol (f need
// not be unimodal over the whole range, only near its minimum).
func minimise(f func(float64) float64, lo, hi, tol float64) float64 {
	const grid = 40
	best, bx := math.Inf(1), lo
	step := (hi - lo) / grid
	for i := 0; i <= grid; i++ {
		x := lo + float64(i)*step
		if v := f(x); v < best {
			best, bx = v, x
		}
	}
	a, b := max(lo, bx-step), min(hi, bx+step)
	g := (math.Sqrt(5) - 1) / 2
	c, d := b-g*(b-a), a+g*(b-a)
	fc, fd := f(c), f(d)
	for b-a > tol {
		if fc < fd {
			b, d, fd = d, c, fc
			c = b - g*(b-a)
			fc = f(c)
		} else {
			a, c, fc = c, d, fd
			d = a + g*(b-a)
			fd = f(d)
		}
	}
	if x := (a + b) / 2; f(x) <= best {
		return x
	}
	return bx
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
