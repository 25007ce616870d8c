package check

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

// TestStateCuts: floor samples in two clusters a large factor apart are
// two states, whatever their order or noise; one wide cluster, a few
// outliers, or two clusters closer than stateFactor are one state.
func TestStateCuts(t *testing.T) {
	noisy := func(center float64, n int, seed int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = center * (1 + 0.08*math.Sin(float64(i*7+seed))) // ±8%
		}
		return out
	}
	two := append(noisy(27, 31, 1), noisy(170, 62, 2)...)
	cuts := stateCuts(two)
	if len(cuts) != 1 || cuts[0] < 30 || cuts[0] > 150 {
		t.Fatalf("27 ns x31 and 170 ns x62: cuts %v, want one between the clusters", cuts)
	}
	ps := newPairStates(two)
	if !ps.changed() || ps.ranked != 1 || ps.rounds[0] != 31 || ps.rounds[1] != 62 || math.Abs(ps.floorNs-170) > 15 {
		t.Errorf("states %+v: want 31 rounds at 27 ns, 62 at 170 ns, ranked in the second", ps)
	}
	// Interleaved in time: the same.
	mixed := slices.Clone(two)
	for i := 0; i < len(mixed); i += 2 {
		j := len(mixed) - 1 - i
		mixed[i], mixed[j] = mixed[j], mixed[i]
	}
	if c := stateCuts(mixed); !slices.Equal(c, cuts) {
		t.Errorf("order changed the cuts: %v, want %v", c, cuts)
	}
	// Three states.
	three := append(append(noisy(27, 20, 3), noisy(60, 20, 4)...), noisy(170, 20, 5)...)
	if c := stateCuts(three); len(c) != 2 {
		t.Errorf("27, 60 and 170 ns: cuts %v, want two", c)
	}
	for name, fs := range map[string][]float64{
		"one state":           noisy(170, 93, 6),
		"a wide state":        {150, 155, 160, 165, 170, 175, 180, 185, 190, 200, 210, 220, 229, 107, 140},
		"two outliers":        append(noisy(170, 60, 7), 900, 950),
		"1.3x apart":          append(noisy(100, 30, 8), noisy(130, 30, 9)...),
		"too few samples":     {27, 170},
		"nothing":             nil,
		"zeros and negatives": {0, -1, 0},
	} {
		if c := stateCuts(fs); len(c) != 0 {
			t.Errorf("%s: cuts %v, want none", name, c)
		}
	}
}

// movingHost is a fake Measurer whose host moves under the check: the
// first fastPasses placement passes run with the vCPUs on SMT siblings
// (floor 27 ns), every later one on separate cores (floor 170 ns). Each candidate's time
// in each state is given; a candidate listed in dropSlow is dropped early
// (after minSamples) in the slow passes, as the 2x rule drops one whose
// early samples straddled the move, so that most of its samples come from
// the fast state. impossible lists candidates whose rounds read their
// fast time beside a slow floor (a sample taken in the other state), and
// confirm decides whether a repeat of one of them alone reads them so
// again (false: it reads its true slow time).
type movingHost struct {
	*ModelMeasurer
	fast, slow   map[string]float64
	floorFast    float64
	floorSlow    float64
	dropSlow     map[string]bool
	impossible   map[string]bool
	stillInRepat bool
	fastPasses   int // passes in the fast state first (at least 1)
	calls        int
	repeats      int
}

func (h *movingHost) Placement(cpus cpuset.Placement, cands []measure.Candidate, opts measure.Options) (measure.Run, error) {
	h.spend(len(cands)+1, opts)
	repeat := len(cands) == 1 && opts.DropFactor == 0
	if repeat {
		h.repeats++
	}
	fastState := h.calls < max(h.fastPasses, 1) && !repeat
	if !repeat {
		h.calls++
	}
	floor := h.floorSlow
	if fastState {
		floor = h.floorFast
	}
	n := opts.Samples
	jitter := func(j int) float64 { return 1 + 0.02*math.Sin(float64(j)) }
	var run measure.Run
	for _, c := range cands {
		r := measure.Result{Algorithm: c.Algorithm, Policy: c.Policy.String(), Threads: len(cpus), CPUs: slices.Clone(cpus), Pinned: true, EpisodesPerRep: 1}
		ns := h.slow[c.Algorithm]
		if fastState || h.impossible[c.Algorithm] && (!repeat || h.stillInRepat) {
			ns = h.fast[c.Algorithm]
		}
		m := n
		if !fastState && !repeat && h.dropSlow[c.Algorithm] && opts.DropFactor > 0 {
			m, r.Dropped = minSamples, true
		}
		for j := 0; j < m; j++ {
			r.Samples = append(r.Samples, ns*jitter(j+len(c.Algorithm)))
		}
		r.Summarise()
		run.Results = append(run.Results, r)
	}
	for j := 0; j < n; j++ {
		run.FloorSamples = append(run.FloorSamples, floor*jitter(3*j))
	}
	st := measure.Summarize(run.FloorSamples)
	run.Floor = &measure.PingPong{CPUs: [2]int{cpus[0], cpus[1]}, MedianNs: st.MedianNs, MinNs: st.MinNs, MaxNs: st.MaxNs, Reps: st.N}
	return run, nil
}

func movingHostCheck(t *testing.T, h *movingHost, algs []string) *results.File {
	t.Helper()
	topo, err := hwtree.FromSynthetic("pack:1 core:2 pu:1")
	if err != nil {
		t.Fatal(err)
	}
	mm, err := NewModelMeasurer(topo, nil, model.DefaultModel, model.DefaultParams(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	h.ModelMeasurer = mm
	f, err := Run(context.Background(), Config{Topology: topo, Measurer: h, Threads: []int{2}, SetsLimit: 1, Algorithms: algs, Budget: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if h.calls < 3 {
		t.Fatalf("the check made %d passes; the test needs at least 3", h.calls)
	}
	return f
}

// TestHostMovesUnderTheCheck: the floor moves from 27 ns to 170 ns after
// four of ten passes, and the slower algorithm (central: 32 ns and 200 ns
// against dissemination's 30 and 180) is dropped early in the slow passes,
// so most of its samples are fast ones. The pooled median (what ranked
// before) crowns it at a fraction of the file's floor; ranked by the
// samples over the same rounds' floor in the state most rounds saw,
// dissemination wins, at about 1.06 times the floor, and the file and its
// floor record the move.
func TestHostMovesUnderTheCheck(t *testing.T) {
	h := &movingHost{
		fast:      map[string]float64{"dissemination": 30, "central": 32},
		slow:      map[string]float64{"dissemination": 180, "central": 200},
		floorFast: 27, floorSlow: 170, fastPasses: 4,
		dropSlow: map[string]bool{"central": true},
	}
	f := movingHostCheck(t, h, []string{"central", "dissemination"})
	e := f.Lookup(2)
	if e == nil || e.Best == nil {
		t.Fatal("no winner")
	}
	// The old statistic would have crowned central: check the scenario.
	raw := map[string]float64{}
	for _, m := range e.Measurements {
		raw[m.Algorithm] = m.RawMedianNs
	}
	if !(raw["central"] < raw["dissemination"]) {
		t.Fatalf("raw medians %v: the scenario must make the pooled median favour central", raw)
	}
	if e.Best.Algorithm != "dissemination" {
		t.Errorf("best %s at %.1f ns, want dissemination (the faster in both states)", e.Best.Algorithm, e.Best.MedianNs)
	}
	fl := f.Floor[0]
	if x := e.Best.MedianNs / fl.MedianNs; x < ImpossibleFraction || x > 1.2 {
		t.Errorf("best %.1f ns over the file's floor %.1f ns = %.2f, want 1.06", e.Best.MedianNs, fl.MedianNs, x)
	}
	if len(fl.States) != 2 || fl.RankedState != 1 || fl.States[0].Rounds >= fl.States[1].Rounds || math.Abs(fl.MedianNs-170) > 10 {
		t.Errorf("floor %+v: want two states, ranked in the slow one (most rounds) at about 170 ns", fl)
	}
	if !strings.Contains(f.HostChange, "moved between 2 states") {
		t.Errorf("host_change %q: want it to say the floor moved", f.HostChange)
	}
	for _, m := range e.Measurements {
		if m.FloorRatio == 0 || m.RankedRounds == 0 || math.Abs(m.MedianNs/fl.MedianNs-m.FloorRatio) > 1e-9*m.FloorRatio {
			t.Errorf("%s: median %.1f, floor ratio %.3f over %d rounds: the shown median must be the ratio times the floor", m.Algorithm, m.MedianNs, m.FloorRatio, m.RankedRounds)
		}
	}
}

// TestImpossibleWinnerNotCrowned: a candidate whose every round reads 0.19
// times its floor (its samples in the fast state, the floor in the slow
// one) is measured again beside the floor before it may win; the repeat
// reads the same, so it is rejected, the next candidate wins and the file
// says why. When the repeat reads a possible time it is confirmed and
// ranked by the repeat's rounds.
func TestImpossibleWinnerNotCrowned(t *testing.T) {
	for _, still := range []bool{true, false} {
		h := &movingHost{
			fast:      map[string]float64{"dissemination": 30, "central": 32, "static-tree": 33},
			slow:      map[string]float64{"dissemination": 180, "central": 200, "static-tree": 175},
			floorFast: 27, floorSlow: 170,
			impossible: map[string]bool{"central": true}, stillInRepat: still,
		}
		f := movingHostCheck(t, h, []string{"central", "static-tree", "dissemination"})
		e := f.Lookup(2)
		if e == nil || e.Best == nil {
			t.Fatal("no winner")
		}
		if h.repeats == 0 || len(e.Repeated) == 0 || e.Repeated[0].Algorithm != "central" || e.Repeated[0].FloorRatioBefore >= ImpossibleFraction {
			t.Fatalf("repeats %d, repeated %+v: central at 32 ns beside a 170 ns floor must be measured again", h.repeats, e.Repeated)
		}
		rep := e.Repeated[0]
		var central results.Measurement
		for _, m := range e.Measurements {
			if m.Algorithm == "central" {
				central = m
			}
		}
		if still {
			if rep.Confirmed || central.Rejected == "" || !strings.Contains(central.Rejected, "not confirmed") {
				t.Errorf("repeat %+v, rejected %q: an impossible time read again must be rejected", rep, central.Rejected)
			}
			if e.Best.Algorithm != "static-tree" {
				t.Errorf("best %s, want static-tree (the fastest possible one)", e.Best.Algorithm)
			}
		} else {
			if !rep.Confirmed || central.Rejected != "" || math.Abs(rep.FloorRatioAfter-200.0/170) > 0.05 {
				t.Errorf("repeat %+v, rejected %q: a repeat at 1.18 times the floor confirms a possible time", rep, central.Rejected)
			}
			if e.Best.Algorithm != "static-tree" || math.Abs(central.MedianNs-200) > 10 {
				t.Errorf("best %s, central %.1f ns: want static-tree, central ranked by its repeat at 200 ns", e.Best.Algorithm, central.MedianNs)
			}
		}
		if still && (e.Robust == nil || e.Robust.Algorithm == "central") {
			t.Errorf("robust %+v: a rejected time is no worst case", e.Robust)
		}
		if x := e.Best.MedianNs / f.Floor[0].MedianNs; x < ImpossibleFraction {
			t.Errorf("best %s at %.2f times the floor: crowned the impossible", e.Best.Algorithm, x)
		}
	}
}
