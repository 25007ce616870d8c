package check

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/barriertune/barriertune/measure"
	"github.com/barriertune/barriertune/results"
)

// newFile starts the results file: this machine's fingerprint and, when
// resuming, the floors and complete thread counts of cfg.Resume (done).
func newFile(cfg Config, start time.Time) (*results.File, map[int]bool, error) {
	f := &results.File{
		Schema:  results.Schema,
		Tool:    results.Tool{Name: "barriertune", Version: cfg.Version},
		Time:    start.UTC().Round(time.Second),
		Machine: CurrentMachine(cfg.Topology),
		Budget:  cfg.Budget.String(),
		Cuts:    []string{},
		Floor:   []results.Floor{},
		Threads: []results.Threads{},
	}
	done := map[int]bool{}
	if r := cfg.Resume; r != nil {
		if why := r.Machine.Mismatch(f.Machine); why != "" {
			return nil, nil, fmt.Errorf("cannot resume results of another machine: %s", why)
		}
		f.Floor = r.Floor
		f.Latency = r.Latency
		for _, t := range r.Threads {
			if t.Complete {
				f.Threads = append(f.Threads, t)
				done[t.Threads] = true
			}
		}
	}
	return f, done, nil
}

// assemble turns the samples into thread-count entries with their winners,
// marks the file partial when the plan was not finished (thread counts the
// plan cut for the budget are listed in Cuts instead), and returns ctx's
// error unless only the budget ran out.
func assemble(ctx context.Context, f *results.File, p *plan, s *samples, budget time.Duration) (*results.File, error) {
	f.Floor = append(f.Floor, s.floors...)
	for ui, u := range p.units {
		entry := s.entry(ui, u)
		if len(entry.Measurements) > 0 {
			f.Threads = append(f.Threads, entry)
		}
	}
	if s.stopped && p.rounds > 1 {
		f.Cuts = append(f.Cuts, fmt.Sprintf("stopped after %d of %d placement passes", s.measured, s.total))
	}
	slices.SortFunc(f.Threads, func(a, b results.Threads) int { return a.Threads - b.Threads })
	for _, u := range p.units {
		if e := f.Lookup(u.threads); e == nil || !e.Complete {
			f.Partial = true
		}
	}
	if !f.Partial {
		return f, nil // finished: a signal after the last sample changes nothing
	}
	cause := context.Cause(ctx)
	if ctx.Err() == context.DeadlineExceeded {
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

// entry is the results entry of unit ui: every measurement, the winner and
// the robust choice.
func (s *samples) entry(ui int, u unit) results.Threads {
	entry := results.Threads{Threads: u.threads, Source: results.SourceMeasured, Measurements: []results.Measurement{}, Complete: true}
	var scoring []scoringSamples // aligned with entry.Measurements, for the tie test
	for si, set := range u.sets {
		k := key{ui, si}
		rs, ok := s.pooled[k]
		if !ok || s.cut[k] {
			entry.Complete = false
		}
		for i, r := range rs {
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
	if rk := s.ratios[k]; rk != nil && len(rk[i]) > 0 {
		norm = measure.Median(rk[i]) * measure.Median(s.floorSamples[k])
	}
	return results.Measurement{
		Algorithm: r.Algorithm, Policy: r.Policy, Label: label, Config: config,
		CPUs: r.CPUs, Pinned: r.Pinned, MedianNs: r.MedianNs, MinNs: r.MinNs, MaxNs: r.MaxNs,
		CILowNs: r.CILowNs, CIHighNs: r.CIHighNs, NormalizedNs: norm, Reps: r.Reps, Dropped: r.Dropped,
		MeanNs: r.MeanNs, StddevNs: r.StddevNs, Outliers: r.Outliers,
	}
}
