package measure

import (
	"context"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/osal"
)

func TestSummarise(t *testing.T) {
	r := summarise([]float64{5, 1, 4, 2, 3})
	if r.MedianNs != 3 || r.MinNs != 1 || r.MaxNs != 5 || r.Reps != 5 {
		t.Errorf("summarise = %+v", r)
	}
	if r.CILowNs > r.MedianNs || r.CIHighNs < r.MedianNs {
		t.Errorf("interval [%v, %v] must hold the median %v", r.CILowNs, r.CIHighNs, r.MedianNs)
	}
	if m := Median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of an even count = %v, want 2.5", m)
	}
	if !math.IsNaN(Median(nil)) || summarise(nil).Reps != 0 {
		t.Error("empty samples must give NaN median and 0 reps")
	}
	// The interval narrows as samples grow.
	var many []float64
	for i := 0; i < 101; i++ {
		many = append(many, float64(i))
	}
	big := summarise(many)
	if big.CIHighNs-big.CILowNs >= 40 || big.CILowNs > 50 || big.CIHighNs < 50 {
		t.Errorf("101 samples: interval [%v, %v]", big.CILowNs, big.CIHighNs)
	}
}

func TestDrop(t *testing.T) {
	samples := [][]float64{{10, 11, 10, 12, 10}, {25, 24, 26, 25, 25}, {15, 14, 15, 16, 15}, {100}}
	skip := make([]bool, 4)
	works := make([]workload, 4)
	drop(samples, skip, works, Options{DropFactor: 2, MinSamples: 5})
	if want := []bool{false, true, false, false}; !equalBools(skip, want) {
		t.Errorf("skip = %v, want %v (the 2.5x one goes; too few samples protect the last)", skip, want)
	}
	skip = make([]bool, 4)
	drop(samples, skip, works, Options{MinSamples: 5})
	if skip[1] {
		t.Error("DropFactor 0 must never drop")
	}
	works[1].keep = true
	drop(samples, skip, works, Options{DropFactor: 2, MinSamples: 5})
	if skip[1] {
		t.Error("a kept workload (the floor) must never be dropped")
	}
}

func equalBools(a, b []bool) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

func TestBarriersMeasures(t *testing.T) {
	cpus := []int{0}
	if runtime.NumCPU() > 1 {
		cpus = []int{0, 1}
	}
	cands := []Candidate{{Algorithm: "dissemination", Policy: barriers.AutoPolicy}, {Algorithm: "central", Policy: barriers.Park}, {Algorithm: "cond", Policy: barriers.AutoPolicy}}
	run, err := Barriers(cpus, cands, Options{Samples: 5, SampleTarget: 50 * time.Microsecond, Floor: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(cpus) == 2 && !osal.OversubscribedHere(cpuset.Placement(cpus)) {
		if f := run.Floor; f == nil || f.Reps != 5 || f.MedianNs <= 0 {
			t.Errorf("floor %+v: want 5 samples interleaved with the candidates", f)
		}
	}
	for i, r := range run.Results {
		if r.Algorithm != cands[i].Algorithm || r.Policy != cands[i].Policy.String() || r.Threads != len(cpus) {
			t.Errorf("result %d is %+v", i, r)
		}
		if r.Reps != 5 || r.EpisodesPerRep < 1 || !(r.MinNs > 0 && r.MinNs <= r.MedianNs && r.MedianNs <= r.MaxNs) {
			t.Errorf("%s: implausible statistics %+v", r.Algorithm, r)
		}
	}
}

func TestOversubscribedRunsUnpinned(t *testing.T) {
	cpus := []int{0, 0, 0, 0, 0}
	if !osal.OversubscribedHere(cpuset.Placement(cpus)) || osal.OversubscribedHere(cpuset.Placement([]int{0})) {
		t.Fatal("Oversubscribed is wrong")
	}
	run, err := Barriers(cpus, []Candidate{{Algorithm: "combining", Policy: barriers.AutoPolicy}}, Options{Samples: 3, SampleTarget: 20 * time.Microsecond, Floor: true})
	if err != nil {
		t.Fatal(err)
	}
	rs := run.Results
	if run.Floor != nil {
		t.Error("an oversubscribed placement has no floor")
	}
	if rs[0].Pinned || rs[0].Reps != 3 {
		t.Errorf("result %+v: want 3 unpinned samples", rs[0])
	}
}

func TestContextStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	run, err := Barriers([]int{0}, []Candidate{{Algorithm: "central", Policy: barriers.AutoPolicy}}, Options{Samples: 50, Context: ctx})
	if err != nil {
		t.Fatal(err)
	}
	rs := run.Results
	if rs[0].Reps >= 50 || rs[0].Reps < 1 {
		t.Errorf("a cancelled run took %d samples, want at least 1 and fewer than 50", rs[0].Reps)
	}
}

func TestErrors(t *testing.T) {
	if _, err := Barriers(nil, []Candidate{{Algorithm: "central", Policy: barriers.AutoPolicy}}, Options{}); err == nil {
		t.Error("no CPUs accepted")
	}
	if _, err := Barriers([]int{0}, []Candidate{{Algorithm: "nope", Policy: barriers.AutoPolicy}}, Options{}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown algorithm: %v", err)
	}
	if _, err := Barriers([]int{0, 5000}, []Candidate{{Algorithm: "central", Policy: barriers.AutoPolicy}}, Options{}); err == nil || !strings.Contains(err.Error(), "5000") {
		t.Errorf("CPU outside the allowed set: %v", err)
	}
	if _, err := PingPongLatency(1, 1, Options{}); err == nil {
		t.Error("ping-pong on one CPU accepted")
	}
}

func TestPingPong(t *testing.T) {
	if runtime.NumCPU() < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two CPUs")
	}
	pp, err := PingPongLatency(0, 1, Options{Samples: 5, SampleTarget: 50 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	if pp.Reps != 5 || !(pp.MinNs > 0 && pp.MinNs <= pp.MedianNs && pp.MedianNs <= pp.MaxNs) {
		t.Errorf("implausible ping-pong %+v", pp)
	}
}

// TestHierarchyCandidate: a hybrid candidate is built with its levels and
// a tree candidate with its fan-in (a bad one is an error naming it), and
// the results record both. Runs unpinned, so one CPU suffices.
func TestHierarchyCandidate(t *testing.T) {
	cpus := []int{0, 0, 0, 0, 0}
	specs, err := barriers.ParseHierarchy("core:central, package:combining(2)")
	if err != nil {
		t.Fatal(err)
	}
	levels, err := barriers.Hierarchy(specs).Grouped([][]int{{0, 0, 1, 1, 2}, {0, 0, 0, 0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	cands := []Candidate{
		{Algorithm: "hybrid", Policy: barriers.AutoPolicy, Hierarchy: levels},
		{Algorithm: "combining", Policy: barriers.AutoPolicy, FanIn: 3},
		{Algorithm: "central", Policy: barriers.AutoPolicy, Hierarchy: levels}, // ignored
	}
	run, err := Barriers(cpus, cands, Options{Samples: 3, SampleTarget: 20 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		comp  string
		fanIn int
	}{{"core:central,package:combining(2)", 0}, {"", 3}, {"", 0}}
	for i, r := range run.Results {
		if r.Composition != want[i].comp || r.FanIn != want[i].fanIn || r.Reps != 3 {
			t.Errorf("%s: composition %q fan-in %d reps %d, want %q %d 3", r.Algorithm, r.Composition, r.FanIn, r.Reps, want[i].comp, want[i].fanIn)
		}
	}
	// Levels for another participant count are refused, naming them.
	_, err = Barriers([]int{0, 0, 0}, cands[:1], Options{Samples: 1})
	if err == nil || !strings.Contains(err.Error(), "core:central") {
		t.Errorf("levels for 5 on 3 participants: %v", err)
	}
}

// TestRoundOrders: every round runs every workload once, the order changes
// from round to round (so the floor is not always last, next to the same
// candidate), and the orders repeat from run to run.
func TestRoundOrders(t *testing.T) {
	const rounds, works = 40, 5
	orders := roundOrders(rounds, works)
	if len(orders) != rounds {
		t.Fatalf("%d orders, want %d", len(orders), rounds)
	}
	lastAt := map[int]int{} // workload -> rounds it ran last
	changed := 0
	for r, o := range orders {
		seen := make([]bool, works)
		for _, i := range o {
			if i < 0 || i >= works || seen[i] {
				t.Fatalf("round %d: order %v is not a permutation of 0..%d", r, o, works-1)
			}
			seen[i] = true
		}
		if len(o) != works {
			t.Fatalf("round %d: order %v has %d workloads, want %d", r, o, len(o), works)
		}
		lastAt[o[works-1]]++
		if r > 0 && !slices.Equal(o, orders[r-1]) {
			changed++
		}
	}
	if changed < rounds/2 {
		t.Errorf("the order changed in %d of %d rounds", changed, rounds-1)
	}
	if len(lastAt) < works {
		t.Errorf("only workloads %v ever ran last in %d rounds", lastAt, rounds)
	}
	again := roundOrders(rounds, works)
	for r := range orders {
		if !slices.Equal(orders[r], again[r]) {
			t.Fatalf("round %d: %v then %v: the orders must repeat", r, orders[r], again[r])
		}
	}
	if len(roundOrders(0, works)) != 0 {
		t.Error("no rounds: no orders")
	}
}

// countingBarrier counts rank 0's waits.
type countingBarrier struct{ waits int }

func (b *countingBarrier) Wait(id int) {
	if id == 0 {
		b.waits++
	}
}
func (b *countingBarrier) WaitContext(_ context.Context, id int) error { b.Wait(id); return nil }
func (b *countingBarrier) Break()                                      {}
func (b *countingBarrier) Reset()                                      {}
func (b *countingBarrier) N() int                                      { return 2 }

// TestInstancesShareTheEpisodes: a sample of k episodes runs k/n on each
// of n instances (the first ones take the remainder), on every rank.
func TestInstancesShareTheEpisodes(t *testing.T) {
	for _, c := range []struct{ n, k int }{{1, 7}, {3, 9}, {3, 10}, {3, 2}, {4, 1001}} {
		bs := make([]barriers.Barrier, c.n)
		cs := make([]*countingBarrier, c.n)
		for i := range bs {
			cs[i] = &countingBarrier{}
			bs[i] = cs[i]
		}
		w := instancesWorkload(bs)
		w.run(0, c.k)
		w.run(1, c.k) // rank 1 counts nothing
		total := 0
		for i, b := range cs {
			want := c.k / c.n
			if i < c.k%c.n {
				want++
			}
			if b.waits != want {
				t.Errorf("%d instances, %d episodes: instance %d ran %d, want %d", c.n, c.k, i, b.waits, want)
			}
			total += b.waits
		}
		if total != c.k {
			t.Errorf("%d instances: %d episodes run, want %d", c.n, total, c.k)
		}
	}
	if _, err := Barriers([]int{0}, []Candidate{{Algorithm: "central"}}, Options{Instances: MaxInstances + 1}); err == nil || !strings.Contains(err.Error(), "instances") {
		t.Errorf("%d instances: %v", MaxInstances+1, err)
	}
}
