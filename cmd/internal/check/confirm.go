package check

import (
	"fmt"
	"slices"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/results"
)

// maxRepeats is the most candidates of one thread count measured again
// before they could win.
const maxRepeats = 3

// impossible reports whether a measurement's episode is below
// ImpossibleFraction of its floor: no barrier is faster than one
// flag signal each way, so such a time was measured in another state of
// the machine than its floor (or the floor was wrong).
func impossible(m results.Measurement) bool {
	return m.FloorRatio > 0 && m.FloorRatio < ImpossibleFraction
}

// impossibleWhy says why a measurement had to be measured again.
func impossibleWhy(m results.Measurement) string {
	return fmt.Sprintf("its episode of %.1f ns was %.2f times its floor, below the %.1f no barrier goes under", m.MedianNs, m.FloorRatio, ImpossibleFraction)
}

// confirm measures a winner whose episode is below
// ImpossibleFraction of its floor again, beside the floor, before
// it may win: when the repeat puts it at or above that fraction, the
// repeat's rounds replace its paired rounds (it may still win, by the
// same statistic); otherwise it is rejected and the next candidate wins.
// At most maxRepeats candidates per thread count; each repeat and its
// outcome is recorded (s.repeats).
func (s *samples) confirm(p *plan, measureSet func(ui, si int, u *unit, cands []cand, sub []int, o measure.Options) (measure.Run, error), opts measure.Options, m Measurer, deadline time.Time) {
	opts.Samples = max(minSamples, p.samples/3)
	opts.DropFactor = 0
	opts.Floor = true
	s.analyse()
	for ui := range p.units {
		u := &p.units[ui]
		for range maxRepeats {
			ms, scoring, refs, _ := s.measurements(ui, *u)
			c := best(ms, scoring)
			if c == nil {
				break
			}
			wi := winnerIndex(ms, c)
			if wi < 0 || !impossible(ms[wi]) {
				break
			}
			w := ms[wi]
			r := refs[wi]
			rep := results.Repeat{Algorithm: w.Algorithm, Label: w.Label, CPUs: slices.Clone(w.CPUs), Why: impossibleWhy(w), FloorRatioBefore: w.FloorRatio}
			var pairs []pairSample
			if opts.Context.Err() == nil && !m.Expired(deadline) {
				if run, err := measureSet(ui, r.k.set, u, u.cands, []int{r.i}, opts); err == nil && len(run.Results) == 1 && run.Floor != nil {
					for j := 0; j < min(len(run.Results[0].Samples), len(run.FloorSamples)); j++ {
						if run.FloorSamples[j] > 0 {
							pairs = append(pairs, pairSample{run.Results[0].Samples[j], run.FloorSamples[j]})
						}
					}
				}
			}
			rep.Rounds = len(pairs)
			if len(pairs) > 0 {
				s.pairs[r.k][r.i] = pairs // the suspect rounds are replaced
				after := s.measurement(r.k, r.i, s.pooled[r.k][r.i], "", "")
				rep.FloorRatioAfter = after.FloorRatio
				rep.Confirmed = !impossible(after)
			}
			if !rep.Confirmed {
				if s.rejected[r.k] == nil {
					s.rejected[r.k] = map[int]string{}
				}
				outcome := "it was not measured again (the check stopped)"
				if rep.Rounds > 0 {
					outcome = fmt.Sprintf("measured again beside the floor for %d rounds it read %.2f times the floor: not confirmed, so it may not win", rep.Rounds, rep.FloorRatioAfter)
				}
				s.rejected[r.k][r.i] = rep.Why + "; " + outcome
			}
			s.repeats[ui] = append(s.repeats[ui], rep)
		}
	}
}
