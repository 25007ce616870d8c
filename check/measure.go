package check

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/barriertune/barriertune/measure"
	"github.com/barriertune/barriertune/results"
)

// key names one placement of the plan: unit (thread count) and set.
type key struct{ unit, set int }

// samples is everything the measure step gathered.
type samples struct {
	floors []results.Floor
	// pooled holds, per placement, every candidate's results of every
	// pass.
	pooled map[key][]measure.Result
	// ratios holds, per placement and candidate, the floor-normalised
	// samples of every pass (sample over the same round's floor sample);
	// floorSamples the floor's samples.
	ratios       map[key][][]float64
	floorSamples map[key][]float64
	// cut marks placements whose only pass was cut short.
	cut             map[key]bool
	measured, total int // placement passes measured, planned
	stopped         bool
	// notes record each candidate's composition, fan-in and level keys,
	// by annotationKey.
	notes map[string]annotation
}

// measurePlan measures the plan's floors, then every candidate on every
// placement, MaxRounds passes at most; it stops early when ctx ends.
func measurePlan(ctx context.Context, p *plan, cfg Config, algs []string, start time.Time) (*samples, error) {
	opts := measure.Options{Samples: p.samples, SampleTarget: cfg.SampleTarget, DropFactor: DropFactor, Context: ctx, Floor: true}
	s := &samples{
		pooled: map[key][]measure.Result{}, ratios: map[key][][]float64{},
		floorSamples: map[key][]float64{}, cut: map[key]bool{}, total: p.placements() * p.rounds,
		notes: map[string]annotation{},
	}
	for i, pair := range p.floors {
		pp, err := measure.PingPongLatency(pair[0], pair[1], opts)
		if err != nil {
			return nil, fmt.Errorf("floor between CPUs %d and %d: %w", pair[0], pair[1], err)
		}
		s.floors = append(s.floors, results.Floor{Level: p.levels[i], CPUs: pair, MedianNs: pp.MedianNs, MinNs: pp.MinNs, MaxNs: pp.MaxNs})
	}
	floors, latency := s.floors, []results.LevelLatency(nil)
	if r := cfg.Resume; r != nil {
		latency = r.Latency
		if len(floors) == 0 {
			floors = r.Floor
		}
	}
	composer := newHybridComposer(cfg.Topology, floors, latency)
	composed := map[key][]measure.Candidate{}
	var err error
	estimate := p.estimate(len(algs), cfg.SampleTarget)
	for round := 0; round < p.rounds; round++ {
		for ui, u := range p.units {
			for si, set := range u.sets {
				if ctx.Err() != nil {
					s.stopped = true
					return s, nil
				}
				if cfg.Progress != nil {
					el := time.Since(start)
					cfg.Progress(Progress{Threads: u.threads, Set: si + 1, Sets: len(u.sets), Label: setLabel(u.sets[si]), Round: round + 1, Rounds: p.rounds,
						Algorithms: len(algs), Done: s.measured, Total: s.total, Elapsed: el, Remaining: max(estimate-el, 0)})
				}
				// Composed once per placement: every pass measures the
				// same barriers, so their samples pool.
				cands, ok := composed[key{ui, si}]
				if !ok {
					var notes []annotation
					cands, notes, err = composer.candidates(algs, set.CPUs, measure.DefaultPolicy(set.CPUs))
					if err != nil {
						return nil, fmt.Errorf("%d threads: %w", u.threads, err)
					}
					composed[key{ui, si}] = cands
					for i, a := range algs {
						s.notes[annotationKey(a, set.CPUs)] = notes[i]
					}
				}
				run, err := measure.Barriers(set.CPUs, cands, opts)
				if err != nil {
					return nil, fmt.Errorf("%d threads on CPUs %v: %w", u.threads, set.CPUs, err)
				}
				s.add(ctx, key{ui, si}, &run, round, p.samples)
			}
		}
	}
	return s, nil
}

// add pools one pass over placement k.
func (s *samples) add(ctx context.Context, k key, run *measure.Run, round, want int) {
	if run.FloorSamples != nil {
		if s.ratios[k] == nil {
			s.ratios[k] = make([][]float64, len(run.Results))
		}
		for i, r := range run.Results {
			for j := 0; j < min(len(r.Samples), len(run.FloorSamples)); j++ {
				s.ratios[k][i] = append(s.ratios[k][i], r.Samples[j]/run.FloorSamples[j])
			}
		}
		s.floorSamples[k] = append(s.floorSamples[k], run.FloorSamples...)
	}
	if prev, ok := s.pooled[k]; ok {
		for i := range prev {
			prev[i].Samples = append(prev[i].Samples, run.Results[i].Samples...)
			prev[i].Dropped = prev[i].Dropped && run.Results[i].Dropped // dropped in every pass
		}
	} else {
		s.pooled[k] = run.Results
	}
	s.measured++
	if ctx.Err() != nil && round == 0 && slices.ContainsFunc(run.Results, func(r measure.Result) bool { return !r.Dropped && r.Reps < want }) {
		s.cut[k] = true // this placement's only pass was cut short
	}
}
