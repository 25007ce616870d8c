package check

import (
	"github.com/barriertune/barriertune/measure"
	"github.com/barriertune/barriertune/results"
)

// TieRule is how a tie is settled: among the algorithms tied with the
// fastest, the simplest wins (catalog order, barriers.Names(): central
// first, the blocking baselines last), then the lower median. Simpler
// algorithms have fewer shared lines and fewer rounds to go wrong on
// another day, so when the measurements cannot tell two apart the check
// does not pretend they can.
const TieRule = "simplest algorithm (catalog order) among those within noise of the fastest"

// tied reports whether a candidate is within noise of the fastest: its
// score is within TieFraction of the fastest's, or its samples do not
// differ significantly from the fastest's (Mann-Whitney U test, p >=
// measure.Alpha). Without samples on both sides only the fraction counts.
func tied(fastScore, score float64, fastSamples, samples []float64) bool {
	if score <= fastScore*(1+TieFraction) {
		return true
	}
	if len(fastSamples) == 0 || len(samples) == 0 {
		return false
	}
	return !measure.Compare(fastSamples, samples).Significant
}

// scoringSamples are the samples behind a measurement's score: the
// floor-normalised ones (ratio to the same round's floor sample, times the
// floor's median) when it has a floor, else the raw ones.
type scoringSamples struct {
	raw, normalized []float64
}

// pick returns the samples on the scale best ranks by.
func (s scoringSamples) pick(normalized bool) []float64 {
	if normalized {
		return s.normalized
	}
	return s.raw
}

// allNormalized reports whether every valid measurement has a
// floor-normalised median: then scorer ranks by those, and the tie test
// uses the normalised samples.
func allNormalized(ms []results.Measurement) bool {
	for _, m := range ms {
		if valid(m) && !(m.NormalizedNs > 0) {
			return false
		}
	}
	return true
}
