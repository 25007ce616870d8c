package mpicheck

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/pairs"
)

// Check is one rank count Verify times: the chosen setting's ratio to
// the defaults the check measured.
type Check struct {
	Ranks int
	// Want is the chosen setting's time over the defaults' (the check's
	// BestNs / DefaultNs; times a launch-level setting's ratio where one
	// was chosen).
	Want float64
	// Faster: a setting was chosen at this count as faster than the
	// defaults (else the file only carries a launch-level setting measured
	// not slower here).
	Faster bool
}

// Verified is Verify's finding for one count.
type Verified struct {
	Ranks int
	// Ratio is the median over the pairs of the exported file's time over
	// the defaults'; Want the check's.
	Ratio, Want float64
	// Expected is the Check's Faster.
	Expected bool
	// OK: the file reproduced the chosen setting's time within margin
	// (Ratio <= Want * (1 + margin)); Faster: it was at least faster than
	// the defaults by the margin (Ratio <= 1 / (1 + margin)).
	OK, Faster bool
	// Err says why the count could not be timed.
	Err error
}

// VerifyConfig says how Verify runs the loop through an exported file.
type VerifyConfig struct {
	// Args are the launcher options that read the file (Open MPI: --tune
	// FILE); Env the environment it sets (MPICH: its assignments).
	Args, Env []string
	// Pairs is the launches of each (default 5); Seconds one launch's
	// timed chunks (default 0.05).
	Pairs   int
	Seconds float64
	// Margin is the check's tie margin (0.03).
	Margin float64
	// Progress, when set, is told each launch.
	Progress func(string)
}

// Verify runs the loop through the exported file (not forced
// parameters: a rules file Open MPI rejected would be ignored in
// silence) against the defaults, in pairs of launches in alternating
// order, at each count, and says whether the file reproduces the chosen
// setting's time within the margin.
func (p *Program) Verify(ctx context.Context, vc VerifyConfig, checks []Check) []Verified {
	if vc.Pairs <= 0 {
		vc.Pairs = 5
	}
	if vc.Seconds <= 0 {
		vc.Seconds = 0.05
	}
	var out []Verified
	for _, c := range checks {
		v := Verified{Ranks: c.Ranks, Want: c.Want, Expected: c.Faster}
		var ratios []float64
		for i := 0; i < vc.Pairs && v.Err == nil; i++ {
			var def, file float64
			for k := 0; k < 2; k++ {
				withFile := (i+k)%2 == 1
				s := Sample{Ranks: c.Ranks, Seconds: vc.Seconds, Chunk: 0.005, MaxBarriers: 200000, Limit: 30 * time.Second}
				what := "the defaults"
				if withFile {
					s.Args, s.Env, what = vc.Args, vc.Env, "the exported file"
				}
				if vc.Progress != nil {
					vc.Progress(fmt.Sprintf("verify %s, %d ranks: pair %d/%d, %s", p.Name, c.Ranks, i+1, vc.Pairs, what))
				}
				t, err := p.Run(ctx, s)
				if err != nil {
					v.Err = fmt.Errorf("%s: %w", what, err)
					break
				}
				if withFile {
					file = t.NsPerBarrier
				} else {
					def = t.NsPerBarrier
				}
			}
			if v.Err == nil {
				ratios = append(ratios, file/def)
			}
		}
		if v.Err == nil {
			v.Ratio = pairs.Median(ratios)
			v.OK = v.Ratio <= c.Want*(1+vc.Margin)
			v.Faster = v.Ratio <= 1/(1+vc.Margin)
		}
		out = append(out, v)
	}
	return out
}

// Passed: the file did what the check found at this count: faster than
// the defaults by the margin where a setting was chosen as faster, within
// the margin of the check's ratio elsewhere.
func (v Verified) Passed() bool {
	return v.Err == nil && (v.Faster || !v.Expected && v.OK)
}

// Describe is v in one line.
func (v Verified) Describe() string {
	switch {
	case v.Err != nil:
		return fmt.Sprintf("%d ranks: not verified: %v", v.Ranks, v.Err)
	case v.OK:
		return fmt.Sprintf("%d ranks: verified: the file runs at %.2fx the defaults (the check measured %.2fx)", v.Ranks, v.Ratio, v.Want)
	case v.Faster:
		return fmt.Sprintf("%d ranks: faster than the defaults (%.2fx) but not as fast as the check measured (%.2fx): a noisy machine, or the file does less than the setting", v.Ranks, v.Ratio, v.Want)
	}
	return strings.TrimSpace(fmt.Sprintf("%d ranks: NOT reproduced: the file runs at %.2fx the defaults, the check measured %.2fx (was the file ignored? Open MPI ignores a rules file it cannot read without a word)", v.Ranks, v.Ratio, v.Want))
}
