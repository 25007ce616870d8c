package check

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cmd/internal/store"
	"github.com/barriertune/barriertune/hwtree"
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
		Budget:    cfg.Budget.String(),
		Cuts:      []string{},
		Floor:     []results.Floor{},
		Threads:   []results.Threads{},
		Inference: InferenceRule,
	}
	f.Machine, f.Simulated = cfg.Measurer.Fingerprint(cfg.Topology)
	if f.Simulated {
		f.Time = time.Now().UTC().Round(time.Second) // start is the simulated clock
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
		Tree:         store.TreeOf(topo), // show/export select inside subsets of it
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
	s.analyse()
	f.Floor = append(f.Floor, interleavedFloors(s.floors, p, s)...)
	f.HostChange = s.hostChange()
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
	entry := results.Threads{Threads: u.threads, Source: results.Measured, Measurements: []results.Measurement{}, Complete: true, Rounds: rounds}
	var scoring []scoringSamples
	entry.Measurements, scoring, _, entry.Complete = s.measurements(ui, u)
	entry.Best = best(entry.Measurements, scoring)
	// A winner below ImpossibleFraction of its floor that confirm did not
	// repeat (the check stopped first) may not win: the next one does.
	for entry.Best != nil {
		wi := winnerIndex(entry.Measurements, entry.Best)
		if wi < 0 || !impossible(entry.Measurements[wi]) {
			break
		}
		m := &entry.Measurements[wi]
		why := fmt.Sprintf("%s; the check stopped before it could be measured again", impossibleWhy(*m))
		m.Rejected = why
		if s.repeats == nil {
			s.repeats = map[int][]results.Repeat{}
		}
		s.repeats[ui] = append(s.repeats[ui], results.Repeat{Algorithm: m.Algorithm, Label: m.Label, CPUs: m.CPUs, Why: why, FloorRatioBefore: m.FloorRatio})
		entry.Best = best(entry.Measurements, scoring)
	}
	entry.Repeated = s.repeats[ui]
	entry.Robust = robust(entry.Measurements)
	return entry
}

// ref names one candidate of one placement: placement k, candidate i.
type ref struct {
	k key
	i int
}

// measurements are unit ui's measurements, with the samples behind each
// shown median (for the tie test) and the candidate each comes from, all
// aligned; complete is false when a placement was not measured or its
// only pass was cut short.
func (s *samples) measurements(ui int, u unit) (ms []results.Measurement, scoring []scoringSamples, refs []ref, complete bool) {
	ms, complete = []results.Measurement{}, true
	for si, set := range u.sets {
		k := key{ui, si}
		rs, ok := s.pooled[k]
		if !ok || s.cut[k] {
			complete = false
		}
		for i, r := range rs {
			if len(r.Samples) == 0 {
				// Not measured: the model has no pattern for it, or the
				// budget ended the first round before its sample.
				continue
			}
			ms = append(ms, s.measurement(k, i, r, set.Config, setLabel(set)))
			scoring = append(scoring, s.scoring(k, i, r))
			refs = append(refs, ref{k, i})
		}
	}
	return ms, scoring, refs, complete
}

// winnerIndex is the index in ms of the measurement c was chosen from.
func winnerIndex(ms []results.Measurement, c *results.Choice) int {
	return slices.IndexFunc(ms, func(m results.Measurement) bool {
		return valid(m) && m.Algorithm == c.Algorithm && m.MedianNs == c.MedianNs && slices.Equal(m.CPUs, c.CPUs)
	})
}

// scoring returns the samples behind candidate i's shown median on
// placement k, for the tie test: its paired samples in the ranked state
// (ratio times the state's floor), else its pooled samples.
func (s *samples) scoring(k key, i int, r measure.Result) scoringSamples {
	if ratios, f, _, ok := s.ranked(k, i); ok {
		return scoringSamples{raw: scaled(ratios, f)}
	}
	return scoringSamples{raw: r.Samples}
}

// measurement summarises candidate i's pooled samples on placement k.
func (s *samples) measurement(k key, i int, r measure.Result, config, label string) results.Measurement {
	r.Summarise()
	// The old floor-normalised median: every round's ratio to its floor,
	// whatever the host's state, in ns at the median of every floor
	// sample. Recorded for comparison.
	norm := 0.0
	if pk := s.pairs[k]; i < len(pk) && len(pk[i]) > 0 {
		ratios := make([]float64, len(pk[i]))
		for j, p := range pk[i] {
			ratios[j] = p.ns / p.floor
		}
		norm = measure.Median(ratios) * measure.Median(s.floorSamples[k])
	}
	m := results.Measurement{
		Label: label, Config: config,
		CPUs: r.CPUs, Pinned: r.Pinned, Summary: r.Summary, NormalizedNs: norm, Reps: r.Reps, Dropped: r.Dropped,
		Spec: results.Spec{Algorithm: r.Algorithm, Policy: r.Policy},
	}
	// Paired: the ratios to the same rounds' floor in the ranked host
	// state, times that state's floor. What ranks it and what is shown.
	if ratios, f, _, ok := s.ranked(k, i); ok {
		st := measure.Summarize(scaled(ratios, f))
		m.RawMedianNs = r.MedianNs
		m.Summary = st.Summary
		m.FloorRatio = measure.Median(ratios)
		m.RankedRounds = len(ratios)
	}
	m.Rejected = s.rejected[k][i]
	if n, ok := s.notes[annotationKey(m.Algorithm, m.CPUs)]; ok { // as annotate records it; selection reads the composition
		m.Composition, m.FanIn, m.LevelKeys = n.composition, n.fanIn, n.keys
	}
	return m
}
