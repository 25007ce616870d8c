package model

import (
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/latency"
	"github.com/barriertune/barriertune/hwtree"
)

// pairCosts is one latency between two CPUs (a 2-CPU machine's floor).
type pairCosts float64

func (p pairCosts) Latency(a, b int) float64 {
	if a == b {
		return 0
	}
	return float64(p)
}

// vm2Run is one check's 2-thread measurements on the development VM
// (testdata/vm2-measured.csv) and its floor.
type vm2Run struct {
	obs   []Observation
	floor float64
}

func readVM2(t *testing.T) map[string]*vm2Run {
	t.Helper()
	recs := readTestCSV(t, "testdata/vm2-measured.csv")
	runs := map[string]*vm2Run{}
	for _, r := range recs[1:] {
		n, err0 := strconv.Atoi(r[1])
		fan, err1 := strconv.Atoi(r[3])
		ns, err2 := strconv.ParseFloat(r[6], 64)
		fl, err3 := strconv.ParseFloat(r[7], 64)
		if err0 != nil || err1 != nil || err2 != nil || err3 != nil || n < 2 {
			t.Fatalf("bad row %q", r)
		}
		cpus := make([]int, n) // round-robin over CPUs 0 and 1, as the check placed them
		for i := range cpus {
			cpus[i] = i % 2
		}
		alg := r[2]
		if alg == "hybrid" { // measured as its flat degeneration
			alg, _ = strings.CutPrefix(r[4], "flat:")
		}
		if runs[r[0]] == nil {
			runs[r[0]] = &vm2Run{floor: fl}
		}
		runs[r[0]].obs = append(runs[r[0]].obs, Observation{Algorithm: alg, FanIn: fan, Policy: r[5], CPUs: cpus, MeasuredNs: ns})
	}
	return runs
}

// The fit on the development VM's checks (every candidate, the blocking
// baselines included; run c also 4 and 8 goroutines on the 2 CPUs): no
// constant leaves its bounds (none is negative), every measurement at 2
// threads and every goroutine, cond and channel above the CPUs is
// reproduced within 1.5x, and at each count the model's fastest measured
// within 10% of the measured fastest. The old fit drove the per-signal
// overhead to -48..-74 ns on such data and priced goroutine as a futex
// wake-up (200x); the old model cannot meet the 1.5x (checked below, so
// the test can fail).
func TestFitVM2(t *testing.T) {
	runs := readVM2(t)
	if len(runs) < 3 {
		t.Fatalf("%d runs in testdata, want at least 3", len(runs))
	}
	for name, r := range runs {
		c := pairCosts(r.floor)
		f := Fit(r.obs, c, DefaultParams())
		lo, hi := Bounds(r.floor)
		for _, k := range knobs(lo, hi) {
			if v := *k.at(&f.Params); v < k.lo || v > k.hi || v < 0 {
				t.Errorf("run %s: %s = %g outside [%g, %g]", name, k.name, v, k.lo, k.hi)
			}
		}
		fastest, pickNs, best := map[int]float64{}, map[int]float64{}, map[int]float64{}
		for _, res := range f.Residuals {
			if (res.Threads == 2 || blockingBaseline(res.Algorithm)) && (res.Ratio > 1.5 || res.Ratio < 1/1.5) {
				t.Errorf("run %s: %s at %d threads predicted %.0f ns, measured %.0f (%.2fx; want within 1.5x)", name, res.Algorithm, res.Threads, res.PredictedNs, res.MeasuredNs, res.Ratio)
			}
			n := res.Threads
			if v, ok := fastest[n]; !ok || res.MeasuredNs < v {
				fastest[n] = res.MeasuredNs
			}
			if v, ok := best[n]; !ok || res.PredictedNs < v {
				best[n], pickNs[n] = res.PredictedNs, res.MeasuredNs
			}
		}
		if len(f.Residuals) != len(r.obs) {
			t.Errorf("run %s: %d residuals for %d measurements", name, len(f.Residuals), len(r.obs))
		}
		for n, v := range fastest {
			if pickNs[n] > 1.1*v {
				t.Errorf("run %s, %d threads: the model's fastest measured %.0f ns, %.2fx the measured fastest %.0f", name, n, pickNs[n], pickNs[n]/v, v)
			}
		}
		t.Logf("run %s: %s; %+v", name, f.Summary(), f.Params)
		// The old model: every increment a full transfer, goroutine a
		// futex wake-up; its best constants leave some measurement
		// further than 1.5x off.
		old := DefaultParams()
		old.CounterArrivalFraction, old.GoroutineNs = 1, 0
		worst := 1.0
		for _, o := range r.obs {
			if len(o.CPUs) > 2 {
				continue
			}
			v, err := PredictWith(DefaultModel, o.Algorithm, o.CPUs, c, o.FanIn, old)
			if err != nil {
				t.Fatal(err)
			}
			if o.Algorithm == "goroutine" {
				v += old.FutexWakeNs
			}
			worst = max(worst, v/o.MeasuredNs, o.MeasuredNs/v)
		}
		if worst <= 1.5 {
			t.Errorf("run %s: the old model is within %.2fx: the data no longer shows its miss", name, worst)
		}
	}
}

// Fit recovers constants it generated the data with: on a two-package
// tree, five algorithms on three placements, the fitted model reproduces
// every measurement within 1% and the line constants within 0.05.
func TestFitRecoversTheModel(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 core:4 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	c := NewTreeCosts(topo)
	truth := DefaultParams()
	truth.SignalOverheadNs, truth.FlagRefetchFraction, truth.CounterTransferFraction, truth.CounterArrivalFraction = 20, 0.3, 0.6, 0.5
	var obs []Observation
	for _, a := range []string{"central", "combining", "dissemination", "static-tree", "mcs"} {
		for _, cpus := range [][]int{{0, 1}, {0, 1, 2, 3, 4, 5, 6, 7}, {0, 2, 4, 6, 8, 10, 12, 14}, {0, 1, 8, 9, 2, 3, 10, 11}} {
			v, err := PredictWith(DefaultModel, a, cpus, c, 0, truth)
			if err != nil {
				t.Fatal(err)
			}
			obs = append(obs, Observation{Algorithm: a, CPUs: cpus, MeasuredNs: v})
		}
	}
	f := Fit(obs, c, DefaultParams())
	if f.MinRatio < 0.99 || f.MaxRatio > 1.01 {
		t.Errorf("fitted model's ratios %.3f-%.3f, want within 1%%: %+v", f.MinRatio, f.MaxRatio, f.Params)
	}
	for _, x := range []struct {
		name      string
		got, want float64
	}{{"flag refetch", f.Params.FlagRefetchFraction, 0.3}, {"counter transfer", f.Params.CounterTransferFraction, 0.6}, {"counter arrival", f.Params.CounterArrivalFraction, 0.5}} {
		if math.Abs(x.got-x.want) > 0.05 {
			t.Errorf("%s fitted %.2f, want %.2f", x.name, x.got, x.want)
		}
	}
	// Leave one out: the others determine every constant, so the held-out
	// algorithm is predicted as well.
	for _, a := range []string{"central", "dissemination", "mcs"} {
		for _, r := range LeaveOneOut(obs, c, DefaultParams(), a) {
			if math.Abs(r.Ratio-1) > 0.03 {
				t.Errorf("leave %s out: predicted %.0f, measured %.0f (%.3fx)", a, r.PredictedNs, r.MeasuredNs, r.Ratio)
			}
		}
	}
}

// No prediction of the default model is below the floor of the widest
// level its placement spans, whatever constants inside Bounds: brute
// force over random constants, placements and every algorithm (the tree's
// latencies are ultrametric, so every pair of participants must exchange
// at least that latency's worth).
func TestPredictionNeverBelowFloor(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 l3:2 core:4 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	c := NewTreeCosts(topo)
	rng := rand.New(rand.NewPCG(28, 1))
	lo, hi := Bounds(300)
	ks := knobs(lo, hi)
	for trial := range 300 {
		prm := DefaultParams()
		for _, k := range ks {
			x := rng.Float64()
			if trial%3 == 0 {
				x = 0 // the lower bounds, where the old fit went below
			}
			*k.at(&prm) = k.lo + x*(k.hi-k.lo)
		}
		n := 2 + rng.IntN(15)
		cpus := rng.Perm(32)[:n]
		widest := 0.0
		for _, a := range cpus {
			for _, b := range cpus {
				if a != b {
					widest = max(widest, c.Latency(a, b))
				}
			}
		}
		for _, alg := range Algorithms() {
			v, err := PredictWith(DefaultModel, alg, cpus, c, 0, prm)
			if err != nil {
				t.Fatal(err)
			}
			if v < widest-1e-9 {
				t.Fatalf("%s on %v with %+v: predicted %.1f ns, below the floor %.1f", alg, cpus, prm, v, widest)
			}
		}
	}
}

// Goroutines that fit the CPUs spin: the goroutine barrier is priced as
// central plus GoroutineNs, not a futex wake-up (the old model predicted
// 40 µs at 2 threads against 193-280 ns measured).
func TestGoroutineFitsTheCPUs(t *testing.T) {
	c := pairCosts(180)
	g, err := Predict(DefaultModel, "goroutine", []int{0, 1}, c, 0)
	if err != nil {
		t.Fatal(err)
	}
	central, _ := Predict(DefaultModel, "central", []int{0, 1}, c, 0)
	if g != central+DefaultParams().GoroutineNs {
		t.Errorf("goroutine at 2 pinned threads predicted %.0f ns, want central's %.0f + %.0f", g, central, DefaultParams().GoroutineNs)
	}
	// Above the CPUs: one scheduler switch per goroutine, the CPUs
	// sharing them, whatever the pattern (the old model: 2 stages of
	// wake-ups and 2(n-1) signals, the spinning algorithms' price).
	for _, n := range []int{4, 8, 64} {
		cpus := make([]int, n)
		for i := range cpus {
			cpus[i] = i % 2
		}
		over, _ := Predict(DefaultModel, "goroutine", cpus, c, 0)
		if want := DefaultParams().OversubscribedGoroutineNs * float64(n) / 2; over != want {
			t.Errorf("%d goroutines on 2 CPUs predicted %.0f ns, want %.0f", n, over, want)
		}
		cond, _ := Predict(DefaultModel, "cond", cpus, c, 0)
		if want := DefaultParams().OversubscribedParkNs * float64(n) / 2; cond != want {
			t.Errorf("cond, %d goroutines on 2 CPUs: predicted %.0f ns, want %.0f", n, cond, want)
		}
	}
}

func blockingBaseline(alg string) bool {
	return alg == "goroutine" || alg == "cond" || alg == "channel"
}

// TreeCosts' ancestor chains give every pair the latency of the object
// Covering finds for it (brute force, the table it replaced), with
// measured levels overriding the typical ones, on trees with SMT, caches,
// NUMA nodes and an L3 that covers its package.
func TestTreeCostsMatchCovering(t *testing.T) {
	for _, s := range []string{"pack:2 l3:2 core:4 pu:2", "pack:2 numa:2 l3:1 l2:2 core:2 pu:2", "pack:1 l3:1 core:2 pu:1", "core:3 pu:1", "pu:5"} {
		topo, err := hwtree.FromSynthetic(s)
		if err != nil {
			t.Fatal(err)
		}
		byLevel := map[hwtree.Type]float64{hwtree.L3Cache: 33, hwtree.Machine: 177}
		tc := NewTreeCostsFrom(topo, byLevel)
		pus := topo.PUs()
		for _, a := range pus {
			for _, b := range pus {
				want := SameCoreNS
				if a != b {
					lca := topo.Covering(a.CPUSet.Or(b.CPUSet))
					want = levelNS(lca)
					if m, ok := byLevel[lca.Type]; ok {
						want = m
					}
				}
				if got := tc.Latency(a.OSIndex, b.OSIndex); got != want {
					t.Errorf("%s: CPUs %d, %d: %g ns, want %g", s, a.OSIndex, b.OSIndex, got, want)
				}
			}
		}
		if got := tc.Latency(pus[0].OSIndex, 1<<20); got != AcrossNS {
			t.Errorf("%s: unknown CPU %g ns, want %g", s, got, AcrossNS)
		}
	}
}

// DefaultsProvenance's figures are the defaults' extreme ratios on the
// kept measurements, recomputed.
func TestDefaultsProvenance(t *testing.T) {
	m, err := latency.ReadCSVFile("testdata/vcpu16-matrix.csv")
	if err != nil {
		t.Fatal(err)
	}
	var obs []Observation
	for _, e := range readEpisodes16(t) {
		obs = append(obs, Observation{Algorithm: e.algorithm, CPUs: seq(e.threads), MeasuredNs: e.measured})
	}
	_, _, lo, hi := Residuals(obs, m, DefaultParams())
	r := readVM2(t)["b"]
	_, _, lo2, hi2 := Residuals(r.obs, pairCosts(r.floor), DefaultParams())
	f := Fit(r.obs, pairCosts(r.floor), DefaultParams())
	for _, want := range []string{
		fmt.Sprintf("%.2f-%.2fx on a 16-vCPU", lo, hi),
		fmt.Sprintf("%.2f-%.2fx on a 2-vCPU", lo2, hi2),
		fmt.Sprintf("%.2f-%.2fx once fitted", f.MinRatio, f.MaxRatio),
	} {
		if !strings.Contains(DefaultsProvenance, want) {
			t.Errorf("DefaultsProvenance %q lacks %q", DefaultsProvenance, want)
		}
	}
}

// Fit leaves out what it cannot predict (an unknown algorithm, CPUs the
// matrix lacks, a time that is not a positive number) and fits the rest;
// with nothing left it returns its start inside the bounds.
func TestFitLeavesOutTheUnpredictable(t *testing.T) {
	m, err := latency.ReadCSVFile("testdata/vcpu16-matrix.csv")
	if err != nil {
		t.Fatal(err)
	}
	good := []Observation{{Algorithm: "central", CPUs: seq(4), MeasuredNs: 600}, {Algorithm: "dissemination", CPUs: seq(4), MeasuredNs: 400}}
	bad := []Observation{
		{Algorithm: "nope", CPUs: seq(4), MeasuredNs: 500},
		{Algorithm: "central", CPUs: []int{0, 99}, MeasuredNs: 500},
		{Algorithm: "central", CPUs: seq(2), MeasuredNs: math.NaN()},
		{Algorithm: "central", CPUs: seq(2), MeasuredNs: -1},
		{Algorithm: "central", CPUs: seq(2), MeasuredNs: math.Inf(1)},
		{Algorithm: "central", MeasuredNs: 100},
	}
	f := Fit(append(bad, good...), m, DefaultParams())
	if len(f.Residuals) != len(good) || math.IsNaN(f.RMSLogRatio) {
		t.Errorf("fitted %d residuals (rms %g), want the %d predictable", len(f.Residuals), f.RMSLogRatio, len(good))
	}
	start := DefaultParams()
	start.SignalOverheadNs = -50
	if g := Fit(bad, m, start); len(g.Residuals) != 0 || g.Params.SignalOverheadNs != 0 {
		t.Errorf("nothing to fit: %d residuals, overhead %g (want 0: the start inside the bounds)", len(g.Residuals), g.Params.SignalOverheadNs)
	}
}

// PriceComposition prices the composition Hybrid chose exactly as Hybrid
// did, under the defaults and under other constants.
func TestPriceCompositionMatchesHybrid(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 l3:2 core:4 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	c := NewTreeCosts(topo)
	other := DefaultParams()
	other.SignalOverheadNs, other.FlagRefetchFraction, other.CounterArrivalFraction = 15, 0.3, 0.2
	levels := 0
	for _, prm := range []Params{DefaultParams(), other} {
		for _, n := range []int{8, 16, 24, 32} {
			cpus := make([]int, n)
			for i := range cpus {
				cpus[i] = topo.CPUs()[i]
			}
			comp, ns, err := HybridForWith(DefaultModel, topo, cpus, c, prm)
			if err != nil {
				t.Fatal(err)
			}
			if len(comp.Levels) < 2 {
				continue // flat
			}
			levels++
			got, err := PriceComposition(DefaultModel, comp.Levels, cpus, c, prm)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-ns) > 1e-9*ns {
				t.Errorf("%d threads %s: priced %.3f, Hybrid %.3f", n, comp, got, ns)
			}
		}
	}
	if levels == 0 {
		t.Fatal("no composition of levels to price")
	}
}

// readTestCSV reads a CSV file of testdata, its "#" comment lines and
// empty lines left out.
func readTestCSV(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			rows = append(rows, l)
		}
	}
	recs, err := csv.NewReader(strings.NewReader(strings.Join(rows, "\n"))).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}
