package check

import (
	"context"
	"slices"
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
		run.Results = append(run.Results, r)
	}
	return run, nil
}

// Counts above the allowed CPUs get the fastest candidate on OS threads
// (blocking waits), with the runner-up; counts that fit get none; a
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
	if want := 100 * (float64(9000-1000*(len(osThreadAlgorithms)-2))/float64(9000-1000*(len(osThreadAlgorithms)-1)) - 1); o.MarginPct != want {
		t.Errorf("margin %.2f%%, want %.2f%%", o.MarginPct, want)
	}
	f = file()
	measureOSThreads(context.Background(), f, &ModelMeasurer{})
	if f.Threads[1].OSThreads != nil {
		t.Error("the model recorded an OS-thread choice it cannot measure")
	}
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
