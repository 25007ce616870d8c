package check

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/measure"
	"github.com/barriertune/barriertune/results"
)

// newFile starts the results file: this machine's fingerprint (a
// simulated one for a simulated check) and, when resuming, the floors and
// what each thread count of cfg.Resume measured (prev).
func newFile(cfg Config, start time.Time) (*results.File, map[int]resumed, error) {
	f := &results.File{
		Schema:    results.Schema,
		Tool:      results.Tool{Name: "barriertune", Version: cfg.Version},
		Time:      start.UTC().Round(time.Second),
		Machine:   CurrentMachine(cfg.Topology),
		Budget:    cfg.Budget.String(),
		Cuts:      []string{},
		Floor:     []results.Floor{},
		Threads:   []results.Threads{},
		Inference: InferenceRule,
		Simulated: cfg.Measurer.Simulated(),
	}
	if f.Simulated {
		f.Machine = simulatedMachine(cfg.Topology)
		f.Time = time.Now().UTC().Round(time.Second)
	}
	prev := map[int]resumed{}
	if r := cfg.Resume; r != nil {
		if why := r.Machine.ResumeMismatch(f.Machine); why != "" {
			return nil, nil, fmt.Errorf("cannot resume results of another machine: %s", why)
		}
		f.Floor = r.Floor
		f.Latency = r.Latency
		for _, t := range r.Threads {
			if !t.Complete && t.Rounds == 0 {
				continue
			}
			rounds := t.Rounds
			if rounds == 0 && t.Complete {
				rounds = max(r.RoundsPlanned, 1) // a file of before rounds were recorded
			}
			var cpus [][]int
			for _, m := range t.Measurements {
				if len(cpus) == 0 || !slices.Equal(cpus[len(cpus)-1], m.CPUs) {
					cpus = append(cpus, m.CPUs)
				}
			}
			prev[t.Threads] = resumed{rounds: rounds, cpus: cpus, entry: t}
			if t.Complete && rounds >= max(r.RoundsPlanned, 1) {
				t.Samples = nil // finished: its samples are not needed again
				f.Threads = append(f.Threads, t)
			}
		}
	}
	return f, prev, nil
}

// simulatedMachine fingerprints a simulated machine: its tree, and a CPU
// name saying it was simulated, so that no library takes it for this one.
func simulatedMachine(topo *hwtree.Topology) results.Machine {
	m := results.Machine{
		CPU:          results.CPUIdentity{Name: "simulated: " + topo.Source},
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

// assemble turns the samples into thread-count entries with their winners,
// marks the file partial when a round the plan asked for was not measured
// because ctx ended (thread counts the plan cut for the budget are listed
// in Cuts instead), and returns ctx's error unless only the budget ran
// out.
func assemble(ctx context.Context, f *results.File, p *plan, s *samples, budget time.Duration) (*results.File, error) {
	f.Floor = append(f.Floor, interleavedFloors(s.floors, p, s)...)
	f.Calibration = s.calibration
	if s.roundsCut != "" {
		f.Cuts = append(f.Cuts, s.roundsCut)
	}
	f.RoundsPlanned = p.rounds
	f.RoundsDone = p.rounds
	kept := map[int]bool{}
	for _, t := range f.Threads {
		kept[t.Threads] = true
	}
	for ui, u := range p.units {
		entry := s.entry(ui, u, s.rounds[u.threads])
		f.RoundsDone = min(f.RoundsDone, entry.Rounds)
		if len(entry.Measurements) > 0 {
			f.Threads = slices.DeleteFunc(f.Threads, func(t results.Threads) bool { return t.Threads == u.threads })
			f.Threads = append(f.Threads, entry)
		}
	}
	slices.SortFunc(f.Threads, func(a, b results.Threads) int { return a.Threads - b.Threads })
	for _, u := range p.units {
		if e := f.Lookup(u.threads); e == nil || !e.Complete {
			f.Partial = true
		}
	}
	if s.stopped && ctx.Err() != context.DeadlineExceeded && f.RoundsDone < f.RoundsPlanned {
		f.Partial = true // interrupted: the missing rounds are --resume's
	}
	if s.stopped || s.budgetOut {
		f.Cuts = append(f.Cuts, fmt.Sprintf("stopped after %d of %d placement passes (%d of %d rounds done)", s.measured, s.total, f.RoundsDone, f.RoundsPlanned))
	}
	if f.Partial {
		// Keep the raw samples so that --resume pools the missing rounds.
		for ui, u := range p.units {
			if e := f.Lookup(u.threads); e != nil {
				e.Samples = s.rawSamples(ui, u)
			}
		}
	}
	if !f.Partial && !s.budgetOut && !(s.stopped && ctx.Err() == context.DeadlineExceeded) {
		return f, nil // finished: a signal after the last sample changes nothing here
	}
	cause := context.Cause(ctx)
	if s.budgetOut || ctx.Err() == context.DeadlineExceeded {
		f.Cuts = append(f.Cuts, fmt.Sprintf("the budget of %s ran out after %d of %d placement passes", budget, s.measured, s.total))
		cause = nil
	}
	if s.measured == 0 {
		if cause == nil {
			return f, fmt.Errorf("%w: the budget of %s ran out before the first placement (raise --budget)", ErrNothingMeasured, budget)
		}
		return f, fmt.Errorf("%w: %w", ErrNothingMeasured, cause)
	}
	return f, cause
}

// rawSamples are unit ui's samples, aligned with its entry's
// measurements.
func (s *samples) rawSamples(ui int, u unit) [][]float64 {
	var out [][]float64
	for si := range u.sets {
		for _, r := range s.pooled[key{ui, si}] {
			if len(r.Samples) == 0 && r.Dropped {
				continue // as entry does
			}
			out = append(out, r.Samples)
		}
	}
	return out
}

// entry is the results entry of unit ui: every measurement, the winner and
// the robust choice.
func (s *samples) entry(ui int, u unit, rounds int) results.Threads {
	entry := results.Threads{Threads: u.threads, Source: results.SourceMeasured, Measurements: []results.Measurement{}, Complete: true, Rounds: rounds}
	var scoring []scoringSamples // aligned with entry.Measurements, for the tie test
	for si, set := range u.sets {
		k := key{ui, si}
		rs, ok := s.pooled[k]
		if !ok || s.cut[k] {
			entry.Complete = false
		}
		for i, r := range rs {
			if len(r.Samples) == 0 && r.Dropped {
				continue // not measured (the model has no pattern for it)
			}
			entry.Measurements = append(entry.Measurements, s.measurement(k, i, r, set.Config, setLabel(set)))
			scoring = append(scoring, s.scoring(k, i, r))
		}
	}
	entry.Best = best(entry.Measurements, scoring)
	entry.Robust = robust(entry.Measurements)
	return entry
}

// scoring returns candidate i's pooled samples on placement k, for the
// tie test (best ranks by their median, the one shown).
func (s *samples) scoring(k key, i int, r measure.Result) scoringSamples {
	return scoringSamples{raw: r.Samples}
}

// measurement summarises candidate i's pooled samples on placement k.
func (s *samples) measurement(k key, i int, r measure.Result, config, label string) results.Measurement {
	r.Summarise()
	// Floor-normalised: the median ratio to the same round's floor, in ns
	// at the floor's median. Slow drift on a shared machine hits a round's
	// candidate and floor alike and cancels.
	norm := 0.0
	if rk := s.ratios[k]; rk != nil && i < len(rk) && len(rk[i]) > 0 {
		norm = measure.Median(rk[i]) * measure.Median(s.floorSamples[k])
	}
	return results.Measurement{
		Algorithm: r.Algorithm, Policy: r.Policy, Label: label, Config: config,
		CPUs: r.CPUs, Pinned: r.Pinned, MedianNs: r.MedianNs, MinNs: r.MinNs, MaxNs: r.MaxNs,
		CILowNs: r.CILowNs, CIHighNs: r.CIHighNs, NormalizedNs: norm, Reps: r.Reps, Dropped: r.Dropped,
		MeanNs: r.MeanNs, StddevNs: r.StddevNs, Outliers: r.Outliers,
	}
}
