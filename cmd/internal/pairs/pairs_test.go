package pairs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// verdict is a stand-in for the check's: faster by more than 3% in the
// medians, and every setting's time below every defaults' time (a crude
// rank test), with at least 4 of each.
func verdict(d, s []float64) Verdict {
	md, ms := Median(d), Median(s)
	v := Verdict{MarginPct: 100 * (md/ms - 1), Test: "fake"}
	if len(d) < 4 || md <= ms*1.03 {
		return v
	}
	v.Faster = slices.Max(s) < slices.Min(d)
	return v
}

// fake is a runner whose settings have true times (ns), noise of ±noise
// (a fraction), an optional second measure, failures and unsteadiness.
type fake struct {
	truth    map[string][]float64 // "" is the defaults
	noise    float64
	fail     map[string]error
	unsteady map[string]int // runs left that come back unsteady
	clock    time.Time
	runCost  time.Duration
	runs     map[string]int
}

func (f *fake) now() time.Time { return f.clock }

func (f *fake) run(_ context.Context, s string) (Sample, error) {
	f.clock = f.clock.Add(f.runCost)
	if f.runs == nil {
		f.runs = map[string]int{}
	}
	f.runs[s]++
	if err := f.fail[s]; err != nil {
		return nil, err
	}
	if f.unsteady[s] > 0 {
		f.unsteady[s]--
		return nil, fmt.Errorf("%w: fake", ErrUnsteady)
	}
	t, ok := f.truth[s]
	if !ok {
		t = f.truth[""]
	}
	out := make(Sample, len(t))
	for i, x := range t {
		out[i] = x * (1 + f.noise*(2*rand.Float64()-1))
	}
	return out, nil
}

// compare runs Compare on f with a deadline of d on f's clock.
func compare(f *fake, d time.Duration, cands ...string) Result {
	f.clock = time.Unix(1e9, 0)
	if f.runCost == 0 {
		f.runCost = 100 * time.Millisecond
	}
	// The deadline is on the fake clock: a context far in the real
	// future whose Deadline Compare reads against f.now.
	ctx := deadlineCtx{Context: context.Background(), d: f.clock.Add(d)}
	return Compare(ctx, Config{Candidates: cands, Run: f.run, Verdict: verdict, Now: f.now,
		BudgetFor: func(need time.Duration) time.Duration { return 3 * need }})
}

type deadlineCtx struct {
	context.Context
	d time.Time
}

func (c deadlineCtx) Deadline() (time.Time, bool) { return c.d, true }

// TestSteady: a run whose start was timed, or that trends, is rejected;
// a steady run, and one with a single chunk hit by a lost time slice, is
// not.
func TestSteady(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chunks []float64
		ok     bool
	}{
		{"steady", []float64{320, 330, 318, 325, 322, 329, 321, 326, 324, 319}, true},
		{"one lost slice", []float64{320, 330, 318, 9000, 322, 329, 321, 326, 324, 319}, true},
		{"the start timed", []float64{50200, 330, 318, 325, 322, 329, 321, 326, 324, 319}, false},
		{"early chunks far slower", []float64{1400, 1300, 1350, 900, 600, 450, 430, 420, 425, 410}, false},
		{"a trend upward", []float64{300, 310, 330, 360, 400, 450, 500, 560, 680, 700}, false},
		{"noise within 2x", []float64{300, 450, 320, 360, 500, 330, 310, 420, 380, 520}, true},
		{"shared CPU, then moved", []float64{45000, 44000, 46000, 47000, 330, 320, 325, 322, 328, 321}, false},
	} {
		err := Steady(tc.chunks)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrUnsteady)) {
			t.Errorf("%s: Steady(%v) = %v, want ok %v (an error wrapping ErrUnsteady)", tc.name, tc.chunks, err, tc.ok)
		}
	}
	for _, bad := range [][]float64{nil, {1, 2}, {1, 0, 2}, {1, -1, 2, 3}} {
		if err := Steady(bad); err == nil || errors.Is(err, ErrUnsteady) {
			t.Errorf("Steady(%v) = %v, want an error that is not ErrUnsteady", bad, err)
		}
	}
}

// TestFasterChosen: among candidates equal to the defaults, the one truly
// 30% faster is chosen, every time, under 5% noise.
func TestFasterChosen(t *testing.T) {
	for i := 0; i < 30; i++ {
		f := &fake{truth: map[string][]float64{"": {1000}, "fast": {700}}, noise: 0.05}
		r := compare(f, time.Minute, "a", "fast", "b", "c")
		if r.Chosen == nil || r.Chosen.Setting != "fast" || !r.Decided {
			t.Fatalf("try %d: chose %v (%s), want fast", i, r.Chosen, r.Why)
		}
		if r.Chosen.Pairs() < 4+3 {
			t.Fatalf("chosen on %d pairs, want at least MinPairs and the confirmation's", r.Chosen.Pairs())
		}
		// Every pair ran the defaults beside the candidate.
		for _, o := range r.Outcomes {
			if len(o.Samples) != len(o.Defaults) {
				t.Fatalf("%s: %d samples, %d defaults", o.Setting, len(o.Samples), len(o.Defaults))
			}
		}
		if f.runs[""] != len(r.DefaultTimes) {
			t.Fatalf("%d runs of the defaults, %d recorded", f.runs[""], len(r.DefaultTimes))
		}
	}
}

// TestAllEqualNothingChosen: when every candidate is the defaults'
// equal, nothing is chosen in a hundred comparisons.
func TestAllEqualNothingChosen(t *testing.T) {
	for i := 0; i < 100; i++ {
		f := &fake{truth: map[string][]float64{"": {1000}}, noise: 0.08}
		r := compare(f, time.Minute, "a", "b", "c")
		if r.Chosen != nil {
			t.Fatalf("try %d chose %s (%s)", i, r.Chosen.Setting, r.Why)
		}
		if !r.Decided || r.Why == "" {
			t.Fatalf("try %d: decided %v, why %q", i, r.Decided, r.Why)
		}
		// Why says why; its readers (show, the exports) say "the
		// defaults stay" themselves, so it does not.
		if strings.Contains(r.Why, "defaults stay") {
			t.Fatalf("try %d: why %q says the defaults stay; its readers say so", i, r.Why)
		}
	}
}

// TestTooFewPairsRefused: a time that holds fewer than MinPairs pairs of
// each decides nothing, even for a candidate twice as fast, and says how
// many pairs it had, how many it needs and the budget that would give
// them.
func TestTooFewPairsRefused(t *testing.T) {
	f := &fake{truth: map[string][]float64{"": {1000}, "fast": {500}}, runCost: time.Second}
	r := compare(f, 5*time.Second, "fast", "other")
	if r.Decided || r.Chosen != nil {
		t.Fatalf("decided %v, chose %v; want no decision", r.Decided, r.Chosen)
	}
	if !strings.Contains(r.Why, "not decided") || !strings.Contains(r.Why, "need 4") || !strings.Contains(r.Why, "a budget of") {
		t.Errorf("why %q: want the pairs had, the pairs needed and the budget", r.Why)
	}
	// 2 s a pair, 4 pairs of 2 candidates and 3 to confirm: 22 s, a
	// budget of 66 s.
	if r.Need != 22*time.Second || !strings.Contains(r.Why, "1m6s") {
		t.Errorf("need %s, why %q; want 22s and a budget of 1m6s", r.Need, r.Why)
	}
}

// TestFailingNeverChosen: a candidate whose run fails (even one that
// would be fastest) is recorded with its failure and never run again nor
// chosen; a faster one that works is.
func TestFailingNeverChosen(t *testing.T) {
	f := &fake{truth: map[string][]float64{"": {1000}, "crash": {100}, "good": {600}},
		fail: map[string]error{"crash": errors.New("crashed: signal: segmentation fault")}}
	r := compare(f, time.Minute, "crash", "good")
	if r.Chosen == nil || r.Chosen.Setting != "good" {
		t.Fatalf("chose %v (%s), want good", r.Chosen, r.Why)
	}
	if o := r.Outcomes[0]; o.Failed == "" || !strings.Contains(o.Failed, "segmentation") || o.Pairs() != 0 || f.runs["crash"] != 1 {
		t.Errorf("crash: failed %q, %d pairs, %d runs; want recorded once, never paired", o.Failed, o.Pairs(), f.runs["crash"])
	}
}

// TestDefaultsFail: a failure of the defaults' own run decides nothing.
func TestDefaultsFail(t *testing.T) {
	f := &fake{truth: map[string][]float64{"": {1000}, "fast": {500}}, fail: map[string]error{"": errors.New("hung")}}
	r := compare(f, time.Minute, "fast")
	if r.Decided || r.Chosen != nil || !strings.Contains(r.Why, "defaults' run failed: hung") {
		t.Fatalf("decided %v, chose %v, why %q", r.Decided, r.Chosen, r.Why)
	}
}

// TestUnsteadyRerun: a run in transition is rerun, not recorded; one
// that stays in transition through every retry drops its pair.
func TestUnsteadyRerun(t *testing.T) {
	f := &fake{truth: map[string][]float64{"": {1000}, "fast": {500}}, unsteady: map[string]int{"fast": 2}}
	r := compare(f, time.Minute, "fast")
	if r.Chosen == nil || r.Outcomes[0].Unsteady != 0 {
		t.Fatalf("chose %v, %d unsteady pairs (%s); want fast, the two unsteady runs rerun", r.Chosen, r.Outcomes[0].Unsteady, r.Why)
	}
	if r.Runs != f.runs[""]+f.runs["fast"] || f.runs["fast"] != r.Outcomes[0].Pairs()+2 {
		t.Errorf("%d runs counted, fast ran %d times for %d pairs; want 2 reruns", r.Runs, f.runs["fast"], r.Outcomes[0].Pairs())
	}
	f = &fake{truth: map[string][]float64{"": {1000}, "fast": {500}}, unsteady: map[string]int{"fast": 3}}
	r = compare(f, time.Minute, "fast")
	if r.Outcomes[0].Unsteady != 1 {
		t.Errorf("%d unsteady pairs, want 1 (three runs in transition in a row)", r.Outcomes[0].Unsteady)
	}
}

// TestSlowerOnSecondMeasureNotChosen: a candidate faster on the first
// measure but slower on the second is not chosen; one faster on the
// first and equal on the second is.
func TestSlowerOnSecondMeasureNotChosen(t *testing.T) {
	for i := 0; i < 20; i++ {
		f := &fake{truth: map[string][]float64{"": {1000, 5000}, "helps-one": {600, 6500}, "helps-both": {800, 5000}}, noise: 0.03}
		r := compare(f, time.Minute, "helps-one", "helps-both")
		if r.Chosen == nil || r.Chosen.Setting != "helps-both" {
			t.Fatalf("chose %v (%s), want helps-both", r.Chosen, r.Why)
		}
		if !strings.Contains(r.Why, "helps-one") {
			t.Fatalf("why %q: want why the fastest was not chosen", r.Why)
		}
	}
}

// TestNarrowsWhenShort: a time that cannot give every candidate
// MinPairs narrows to the fastest after half of them, and decides on it.
func TestNarrowsWhenShort(t *testing.T) {
	for i := 0; i < 20; i++ {
		f := &fake{truth: map[string][]float64{"": {1000}, "fast": {600}}, noise: 0.03}
		// 0.2 s a pair: 3 candidates x 4 pairs and 3 to confirm need 3 s.
		r := compare(f, 2300*time.Millisecond, "a", "fast", "b")
		if r.Chosen == nil || r.Chosen.Setting != "fast" {
			t.Fatalf("chose %v (%s); want fast, narrowed to after 2 rounds", r.Chosen, r.Why)
		}
		if n := r.Outcomes[0].Pairs(); n != 2 {
			t.Fatalf("a got %d pairs, want 2 (dropped when the time ran short)", n)
		}
	}
}

// TestConfirmationCut: a deadline that ends the confirmation early
// decides nothing, and says so.
func TestConfirmationCut(t *testing.T) {
	f := &fake{truth: map[string][]float64{"": {1000}, "fast": {500}}}
	f.clock = time.Unix(1e9, 0)
	f.runCost = 100 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runs := 0
	run := func(c context.Context, s string) (Sample, error) {
		runs++
		if runs == 2*4+2 { // the first fresh pair's second run
			cancel()
		}
		return f.run(c, s)
	}
	r := Compare(ctx, Config{Candidates: []string{"fast"}, Run: run, Verdict: verdict, Now: f.now})
	if r.Decided || r.Chosen != nil || !strings.Contains(r.Why, "the time ran out after") {
		t.Fatalf("decided %v, chose %v, why %q; want not decided, the confirmation cut", r.Decided, r.Chosen, r.Why)
	}
}

// TestDeadlineKept: the comparison ends within its time (one pair of
// slack), however many candidates.
func TestDeadlineKept(t *testing.T) {
	f := &fake{truth: map[string][]float64{"": {1000}}, runCost: 300 * time.Millisecond}
	start := time.Unix(1e9, 0)
	r := compare(f, 10*time.Second, "a", "b", "c", "d", "e", "f")
	if end := f.clock.Sub(start); end > 10*time.Second+600*time.Millisecond {
		t.Fatalf("took %s of a 10 s deadline", end)
	}
	if r.Decided {
		t.Fatalf("decided on at most %d pairs", r.Outcomes[0].Pairs())
	}
}
