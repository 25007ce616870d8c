package check

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/results"
)

// ModelMeasurer is the simulated Measurer: every candidate "measures" its
// prediction by the cost model on Costs (with Noise), and a simulated
// clock advances by what the live check would have spent, so a simulated
// check of a 1024-PU machine keeps the live budget in seconds of real
// time. Make one with NewModelMeasurer; it is not safe for concurrent use.
type ModelMeasurer struct {
	topo   *hwtree.Topology
	costs  model.Costs
	kind   model.Kind
	params model.Params
	// noise is the relative standard deviation of each sample (0: every
	// sample is the prediction).
	noise float64
	rng   *rand.Rand
	clock time.Time
	// hybrid caches the hybrid's predicted time per composition and
	// placement.
	hybrid map[string]float64
}

// NewModelMeasurer returns a measurer predicting with model kind and
// constants params on costs (nil: the tree's typical latencies), each
// sample multiplied by exp(noise·N(0,1)) drawn from a generator seeded
// with seed, so that a simulation is reproducible.
func NewModelMeasurer(topo *hwtree.Topology, costs model.Costs, kind model.Kind, params model.Params, noise float64, seed uint64) (*ModelMeasurer, error) {
	if topo == nil {
		return nil, fmt.Errorf("model measurer: no topology")
	}
	if err := kind.Check(); err != nil {
		return nil, fmt.Errorf("model measurer: %w", err)
	}
	if !(noise >= 0 && noise <= 1) {
		return nil, fmt.Errorf("model measurer: noise %g: want 0 to 1 (a relative standard deviation)", noise)
	}
	if costs == nil {
		costs = model.NewTreeCosts(topo)
	}
	return &ModelMeasurer{topo: topo, costs: costs, kind: kind, params: params, noise: noise,
		rng: rand.New(rand.NewPCG(seed, 0x5eed)), clock: time.Unix(0, 0).UTC(), hybrid: map[string]float64{}}, nil
}

// Costs are the latencies the measurer predicts with (the hybrid is
// composed on them too).
func (m *ModelMeasurer) Costs() model.Costs { return m.costs }

// spend advances the simulated clock by what the live check would spend
// on n candidates (or floors) of opts.Samples samples.
func (m *ModelMeasurer) spend(n int, opts measure.Options) {
	m.clock = m.clock.Add(time.Duration(n) * perCandidate(opts.Samples, opts.SampleTarget))
}

// samples are n samples around ns.
func (m *ModelMeasurer) samples(ns float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = ns
		if m.noise > 0 {
			out[i] = ns * math.Exp(m.noise*m.rng.NormFloat64())
		}
	}
	return out
}

// Floor is the costs' latency between a and b.
func (m *ModelMeasurer) Floor(a, b int, opts measure.Options) (measure.PingPong, error) {
	if a == b {
		return measure.PingPong{}, fmt.Errorf("ping-pong needs two different CPUs, got %d and %d", a, b)
	}
	m.spend(1, opts)
	s := measure.Summarize(m.samples(m.costs.Latency(a, b), opts.Samples))
	return measure.PingPong{CPUs: [2]int{a, b}, MedianNs: s.MedianNs, MinNs: s.MinNs, MaxNs: s.MaxNs, Reps: s.N}, nil
}

// Placement predicts every candidate on cpus; a candidate the model has
// no pattern for is reported dropped with no samples.
func (m *ModelMeasurer) Placement(cpus cpuset.Placement, cands []measure.Candidate, opts measure.Options) (measure.Run, error) {
	if len(cpus) == 0 || len(cands) == 0 {
		return measure.Run{}, fmt.Errorf("model measurer: %d CPUs and %d candidates (want at least one of each)", len(cpus), len(cands))
	}
	m.spend(len(cands)+1, opts)
	pinned := !cpus.Oversubscribed()
	var run measure.Run
	for _, c := range cands {
		r := measure.Result{Algorithm: c.Algorithm, Policy: c.Policy.String(), Threads: len(cpus), FanIn: c.FanIn,
			CPUs: slices.Clone(cpus), Pinned: pinned, EpisodesPerRep: 1}
		if c.Algorithm == algname.Hybrid && len(c.Hierarchy) > 0 {
			r.Composition = barriers.Hierarchy(c.Hierarchy).String()
		}
		ns, err := m.predict(c, cpus)
		if err != nil || math.IsNaN(ns) || math.IsInf(ns, 0) {
			r.Dropped = true
		} else {
			r.Samples = m.samples(ns, opts.Samples)
			r.Summarise()
		}
		run.Results = append(run.Results, r)
	}
	if opts.Floor && len(cpus) >= 2 && pinned && cpus[0] != cpus[1] {
		fs := m.samples(m.costs.Latency(cpus[0], cpus[1]), opts.Samples)
		st := measure.Summarize(fs)
		run.Floor = &measure.PingPong{CPUs: [2]int{cpus[0], cpus[1]}, MedianNs: st.MedianNs, MinNs: st.MinNs, MaxNs: st.MaxNs, Reps: st.N}
		run.FloorSamples = fs
	}
	return run, nil
}

// predict is the model's time for candidate c on cpus: the hybrid's from
// its composition (model.HybridForWith's prediction with the measurer's
// constants when it composes the same levels, else model.PriceComposition:
// the critical path of its pattern and its levels' overheads).
func (m *ModelMeasurer) predict(c measure.Candidate, cpus cpuset.Placement) (float64, error) {
	if c.Algorithm != algname.Hybrid {
		return model.PredictWith(m.kind, c.Algorithm, cpus, m.costs, c.FanIn, m.params)
	}
	if len(c.Hierarchy) == 0 {
		return model.PredictWith(m.kind, algname.Dissemination, cpus, m.costs, 0, m.params)
	}
	comp := c.Hierarchy.String()
	if alg, fanIn, ok := model.FlatOf(comp); ok { // one level: the flat algorithm, with the measurer's constants
		return model.PredictWith(m.kind, alg, cpus, m.costs, fanIn, m.params)
	}
	key := comp + fmt.Sprint(cpus)
	if ns, ok := m.hybrid[key]; ok {
		return ns, nil
	}
	ns := math.NaN()
	if hc, hns, err := model.HybridForWith(m.kind, m.topo, cpus, m.costs, m.params); err == nil && hc.String() == comp {
		ns = hns
	} else { // composed with other constants or latencies: priced as the model prices its own
		v, err := model.PriceComposition(m.kind, c.Hierarchy, cpus, m.costs, m.params)
		if err != nil {
			return 0, err
		}
		ns = v
	}
	m.hybrid[key] = ns
	return ns, nil
}

// LevelLatencies are the costs' per-level medians (levelLatencies).
func (m *ModelMeasurer) LevelLatencies(_ context.Context, topo *hwtree.Topology, opts measure.Options, _ time.Duration, _ []results.Floor) ([]results.LevelLatency, string) {
	if len(topo.PUs()) < 2 {
		return nil, "no per-level latencies: one CPU"
	}
	return levelLatencies(topo, m.costs), ""
}

// Policy is the placement's: spin when every thread has a CPU of its own,
// else auto (the host's GOMAXPROCS does not matter to a simulated
// machine).
func (m *ModelMeasurer) Policy(cpus cpuset.Placement) barriers.Policy {
	if cpus.Oversubscribed() {
		return barriers.AutoPolicy
	}
	return barriers.Spin
}

// Now is the simulated clock.
func (m *ModelMeasurer) Now() time.Time { return m.clock }

// Fingerprint is the simulated machine's (simulatedMachine).
func (m *ModelMeasurer) Fingerprint(topo *hwtree.Topology) (results.Machine, bool) {
	return simulatedMachine(topo), true
}

// Hosts is false: a simulated machine's threads are predicted, not run,
// so any count can be measured.
func (m *ModelMeasurer) Hosts() (Hostable, bool) { return Hostable{}, false }

// BlockWake is none: a simulated file records nothing measured on the host.
func (m *ModelMeasurer) BlockWake() (time.Duration, bool) { return 0, false }

// Accept refuses a tree too large to simulate.
func (m *ModelMeasurer) Accept(topo *hwtree.Topology, _ bool) error { return acceptPlanned(topo) }

// Bound leaves ctx as it is: the budget is kept by the simulated clock.
func (m *ModelMeasurer) Bound(ctx context.Context, _ time.Time) (context.Context, context.CancelFunc) {
	return ctx, func() {}
}

// Expired reports whether the simulated clock is past deadline.
func (m *ModelMeasurer) Expired(deadline time.Time) bool { return m.clock.After(deadline) }

// CanPingPong is true: floors are predicted.
func (m *ModelMeasurer) CanPingPong() bool { return true }
