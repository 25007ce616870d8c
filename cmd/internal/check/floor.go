package check

import (
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/results"
)

// interleavedFloors returns the file's floors: each level's pair that a
// placement also measured alongside its candidates (measure.Barriers with
// Floor: between the placement's first two CPUs, one floor sample per
// round of candidate samples) takes those samples, every pass and every
// such placement pooled, so that the floor and the barriers it bounds
// were timed in the same moments; the other pairs keep the floor measured
// before the passes.
//
// When the samples beside the candidates fell into more than one host
// state (the host moved the CPUs during the check), the floor's median is
// the median of the state most rounds saw, the one the candidates were
// ranked in (pairStates), and States records every state; the extremes
// stay those of every sample.
//
// The floors measured before the passes (the hybrid compositions were
// composed from them) stay recorded as each floor's UpFrontNs, so that a
// reader can rebuild those compositions (composerFloors).
func interleavedFloors(floors []results.Floor, p *plan, s *samples) []results.Floor {
	pooled := map[[2]int][]float64{}
	for k, fs := range s.floorSamples {
		if k.unit >= len(p.units) || k.set >= len(p.units[k.unit].sets) {
			continue
		}
		cpus := p.units[k.unit].sets[k.set].CPUs
		if len(cpus) < 2 {
			continue
		}
		pair := [2]int{min(cpus[0], cpus[1]), max(cpus[0], cpus[1])}
		pooled[pair] = append(pooled[pair], fs...)
	}
	out := make([]results.Floor, len(floors))
	for i, fl := range floors {
		out[i] = fl
		pair := [2]int{min(fl.CPUs[0], fl.CPUs[1]), max(fl.CPUs[0], fl.CPUs[1])}
		if fs := pooled[pair]; len(fs) > 0 {
			st := measure.Summarize(fs)
			ps := newPairStates(fs)
			out[i].UpFrontNs = fl.MedianNs
			out[i].MedianNs, out[i].MinNs, out[i].MaxNs = ps.floorNs, st.MinNs, st.MaxNs
			if ps.changed() {
				out[i].States, out[i].RankedState = ps.record(), ps.ranked
			}
		}
	}
	return out
}

// composerFloors are the floors the hybrid compositions of a file were
// composed from: each floor's UpFrontNs where the shown median pools the
// interleaved samples.
func composerFloors(floors []results.Floor) []results.Floor {
	out := make([]results.Floor, len(floors))
	for i, fl := range floors {
		out[i] = fl
		if fl.UpFrontNs > 0 {
			out[i].MedianNs = fl.UpFrontNs
		}
	}
	return out
}
