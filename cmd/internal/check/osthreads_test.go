package check

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/results"
)

// osFake answers OSThreads with fixed times and records what it was asked.
type osFake struct {
	*ModelMeasurer
	asked [][]int
	cands []measure.Candidate
}

func (o *osFake) OSThreads(cpus cpuset.Placement, cands []measure.Candidate, _ measure.Options) (measure.Run, error) {
	o.asked = append(o.asked, cpus)
	o.cands = cands
	var run measure.Run
	for i, c := range cands {
		r := measure.Result{Algorithm: c.Algorithm, Policy: c.Policy.String(), Threads: len(cpus), CPUs: cpus, Reps: 9}
		r.MedianNs = float64(9000 - 1000*i) // the last candidate is fastest
		for j := range 9 {                  // tight samples: every difference is separable
			r.Samples = append(r.Samples, r.MedianNs+float64(j-4))
		}
		run.Results = append(run.Results, r)
	}
	return run, nil
}

// Counts above the allowed CPUs get the candidate that beats the others
// on OS threads (blocking waits; here the fastest, by far), with the
// runner-up; counts that fit get none; a
// measurer that cannot time OS threads (the model) records nothing.
func TestMeasureOSThreads(t *testing.T) {
	file := func() *results.File {
		return &results.File{Machine: results.Machine{AllowedCPUs: "0-1"}, Threads: []results.Threads{
			{Threads: 2, Best: &results.Choice{Spec: results.Spec{Algorithm: "dissemination"}, CPUs: []int{0, 1}}},
			{Threads: 4, Best: &results.Choice{Spec: results.Spec{Algorithm: "goroutine"}, CPUs: []int{0, 1, 0, 1}}},
		}}
	}
	f := file()
	fake := &osFake{}
	measureOSThreads(context.Background(), f, fake)
	if len(fake.asked) != 1 || !slices.Equal(fake.asked[0], []int{0, 1, 0, 1}) {
		t.Fatalf("asked for %v, want only the 4 threads' round-robin placement", fake.asked)
	}
	for _, c := range fake.cands {
		if c.Policy != barriers.Park {
			t.Errorf("%s measured with %s, want blocking waits (park)", c.Algorithm, c.Policy)
		}
	}
	if f.Threads[0].OSThreads != nil {
		t.Errorf("2 threads on 2 CPUs got an OS-thread choice: %+v", f.Threads[0].OSThreads)
	}
	o := f.Threads[1].OSThreads
	last, second := osThreadAlgorithms[len(osThreadAlgorithms)-1], osThreadAlgorithms[len(osThreadAlgorithms)-2]
	if o == nil || o.Algorithm != last || o.RunnerUp != second || o.Pinned || !slices.Equal(o.CPUs, []int{0, 1, 0, 1}) {
		t.Fatalf("OS-thread choice %+v, want %s (runner-up %s), unpinned, round-robin", o, last, second)
	}
	if want := math.Round(1000*(float64(9000-1000*(len(osThreadAlgorithms)-2))/float64(9000-1000*(len(osThreadAlgorithms)-1))-1)) / 10; o.MarginPct != want {
		t.Errorf("margin %.2f%%, want %.2f%%", o.MarginPct, want)
	}
	f = file()
	measureOSThreads(context.Background(), f, &ModelMeasurer{})
	if f.Threads[1].OSThreads != nil {
		t.Error("the model recorded an OS-thread choice it cannot measure")
	}
}

// osResult is a measured candidate with samples.
func osResult(alg string, samples ...float64) measure.Result {
	r := measure.Result{Algorithm: alg, Reps: len(samples), Samples: samples}
	r.Summarise()
	return r
}

// The simplest candidate wins unless another beats it by the margin and
// the test: a lower median the samples cannot separate, or one within 3%,
// leaves central; a separable one more than 3% lower wins. Checked
// against the definition on every order of the results.
func TestBestOnOSThreads(t *testing.T) {
	cpus := cpuset.Placement{0, 1, 0, 1}
	cases := []struct {
		name      string
		run       []measure.Result
		want      string
		runner    string
		tie       bool
		marginNeg bool
	}{
		{"noisy lower median", []measure.Result{
			osResult("central", spread(185e3, 55e3, 9)...),
			osResult("combining", spread(162.5e3, 47.5e3, 9)...),
			osResult("dissemination", spread(270e3, 90e3, 9)...),
		}, "central", "combining", true, true},
		{"within 3%, separable", []measure.Result{
			osResult("central", spread(100.5e3, 0.5e3, 9)...),
			osResult("combining", spread(98.5e3, 0.5e3, 9)...),
		}, "central", "combining", true, true},
		{"separable and 20% lower", []measure.Result{
			osResult("central", spread(101e3, 1e3, 9)...),
			osResult("combining", spread(81e3, 1e3, 9)...),
			osResult("tournament", spread(250e3, 50e3, 9)...),
		}, "combining", "central", false, false},
		{"central fastest", []measure.Result{
			osResult("dissemination", spread(101e3, 1e3, 9)...),
			osResult("central", spread(61e3, 1e3, 9)...),
		}, "central", "dissemination", false, false},
		{"only one measured", []measure.Result{
			osResult("combining", spread(101e3, 1e3, 9)...),
			{Algorithm: "central"},
		}, "combining", "", false, false},
	}
	for _, tc := range cases {
		for _, run := range permutations(tc.run) {
			c := bestOnOSThreads(measure.Run{Results: run}, cpus)
			if c == nil || c.Algorithm != tc.want || c.RunnerUp != tc.runner || c.Tie != tc.tie || (c.MarginPct < 0) != tc.marginNeg {
				t.Fatalf("%s: got %+v, want %s (runner-up %q, tie %v, negative margin %v)", tc.name, c, tc.want, tc.runner, tc.tie, tc.marginNeg)
			}
			if tc.tie && c.TieRule != TieOSThreads {
				t.Errorf("%s: tie rule %q", tc.name, c.TieRule)
			}
			// The definition: nothing beats the winner, and every simpler
			// measured candidate is beaten by some other.
			var win *measure.Result
			for i := range run {
				if run[i].Algorithm == c.Algorithm {
					win = &run[i]
				}
			}
			for i := range run {
				r := &run[i]
				if r.Reps == 0 {
					continue
				}
				if beats(r, win) {
					t.Errorf("%s: %s beats the winner %s", tc.name, r.Algorithm, c.Algorithm)
				}
				if rank(r.Algorithm) < rank(c.Algorithm) && !slices.ContainsFunc(run, func(d measure.Result) bool { return d.Reps > 0 && beats(&d, r) }) {
					t.Errorf("%s: %s is simpler than the winner %s and nothing beats it", tc.name, r.Algorithm, c.Algorithm)
				}
			}
		}
	}
	if c := bestOnOSThreads(measure.Run{Results: []measure.Result{{Algorithm: "central"}}}, cpus); c != nil {
		t.Errorf("nothing measured, got %+v", c)
	}
}

// permutations returns every order of rs (copies).
func permutations(rs []measure.Result) [][]measure.Result {
	if len(rs) <= 1 {
		return [][]measure.Result{slices.Clone(rs)}
	}
	var out [][]measure.Result
	for i := range rs {
		rest := append(slices.Clone(rs[:i]), rs[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]measure.Result{rs[i]}, p...))
		}
	}
	return out
}

// On the hardware, every candidate is timed on OS threads outnumbering the
// allowed CPUs.
func TestOSThreadsOnHardware(t *testing.T) {
	allowed, err := osal.Allowed()
	if err != nil {
		t.Skip(err)
	}
	// One more thread than the allowed CPUs, round-robin over them (two
	// threads on one CPU under taskset -c 0).
	members := allowed.Members()
	cpus := make([]int, len(members)+1)
	for i := range cpus {
		cpus[i] = members[i%len(members)]
	}
	cands := []measure.Candidate{{Algorithm: "central", Policy: barriers.Park}, {Algorithm: "dissemination", Policy: barriers.Park}}
	run, err := Hardware{}.OSThreads(cpus, cands, measure.Options{Samples: 3, SampleTarget: 200_000})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Results) != 2 {
		t.Fatalf("%d results, want 2", len(run.Results))
	}
	for _, r := range run.Results {
		if r.Reps == 0 || !(r.MedianNs > 0) {
			t.Errorf("%s: %d samples, median %v", r.Algorithm, r.Reps, r.MedianNs)
		}
	}
	if c := bestOnOSThreads(run, cpus); c == nil || !slices.Contains([]string{"central", "dissemination"}, c.Algorithm) {
		t.Errorf("best %+v", c)
	}
}

// show's line says how the OS-thread choices were timed: once when all
// were timed alike, per count when not.
func TestOSThreadsNote(t *testing.T) {
	choice := func(alg, label string, ns float64) *results.Choice {
		return &results.Choice{Spec: results.Spec{Algorithm: alg}, Label: label, MedianNs: ns}
	}
	f := &results.File{Threads: []results.Threads{
		{Threads: 2},
		{Threads: 4, OSThreads: choice("central", OSThreadsCLabel+" (cc 12.2.0)", 2510)},
		{Threads: 8, OSThreads: choice("central", OSThreadsCLabel+" (cc 12.2.0)", 6636)},
	}}
	if got, want := OSThreadsNote(f), "central 2510 ns at 4, central 6636 ns at 8 threads, timed in C with the exported header (cc 12.2.0)"; !strings.HasSuffix(got, want) {
		t.Errorf("all in C: %q, want it to end %q", got, want)
	}
	f.Threads[2].OSThreads = choice("combining", OSThreadsGoLabel, 179286)
	if got, want := OSThreadsNote(f), "central 2510 ns at 4 (timed in C with the exported header (cc 12.2.0)), combining 179.3 µs at 8 (timed with Go's OS threads (not C figures)) threads"; !strings.HasSuffix(got, want) {
		t.Errorf("mixed: %q, want it to end %q", got, want)
	}
	f.Threads[1].OSThreads = nil
	if got, want := OSThreadsNote(f), "combining 179.3 µs at 8 threads, timed with Go's OS threads (not C figures)"; !strings.HasSuffix(got, want) {
		t.Errorf("Go only: %q, want it to end %q", got, want)
	}
	if got := OSThreadsNote(&results.File{Threads: []results.Threads{{Threads: 2}}}); got != "" {
		t.Errorf("none: %q", got)
	}
}
