package latency

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/hwtree"
)

// fakeLatency gives every pair the latency of its lowest common object's
// type in topo (a symmetric machine), counting the calls.
type fakeLatency struct {
	topo  *hwtree.Topology
	pu    map[int]*hwtree.Object
	ns    map[hwtree.Type]float64
	calls int
	// odd, when set, changes single pairs (an asymmetric link).
	odd func(a, b int) (float64, bool)
}

func (f *fakeLatency) lca(a, b int) *hwtree.Object {
	if f.pu == nil {
		f.pu = map[int]*hwtree.Object{}
		for _, o := range f.topo.PUs() {
			f.pu[o.OSIndex] = o
		}
	}
	return f.topo.Covering(f.pu[a].CPUSet.Or(f.pu[b].CPUSet))
}

func (f *fakeLatency) pingPong(a, b int, _ measure.Options) (float64, error) {
	f.calls++
	if f.odd != nil {
		if v, ok := f.odd(a, b); ok {
			return v, nil
		}
	}
	return f.ns[f.lca(a, b).Type], nil
}

var bigNS = map[hwtree.Type]float64{hwtree.Core: 10, hwtree.L3Cache: 30, hwtree.Package: 90, hwtree.Machine: 200}

func bigTopo(t *testing.T) *hwtree.Topology {
	t.Helper()
	topo, err := hwtree.FromSynthetic("pack:4 l3:4 core:8 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// TestRepresentativePairs: on a 256-PU tree every level gets its pairs,
// each pair's level is its lowest common object, pairs are distinct and
// spread over the level's objects, and the cap holds.
func TestRepresentativePairs(t *testing.T) {
	topo := bigTopo(t)
	f := &fakeLatency{topo: topo}
	pairs := RepresentativePairs(topo, topo.CPUs(), 5, 1000)
	per := map[string]int{}
	objs := map[string]map[*hwtree.Object]bool{}
	seen := map[[2]int]bool{}
	for _, p := range pairs {
		l := f.lca(p.A, p.B)
		if l.Type.String() != p.Level || p.A == p.B || seen[[2]int{p.A, p.B}] || seen[[2]int{p.B, p.A}] {
			t.Fatalf("pair %+v: lowest common object %s, or repeated", p, l.Type)
		}
		seen[[2]int{p.A, p.B}] = true
		per[p.Level]++
		if objs[p.Level] == nil {
			objs[p.Level] = map[*hwtree.Object]bool{}
		}
		objs[p.Level][l] = true
	}
	for _, lv := range []string{"Core", "L3Cache", "Package", "Machine"} {
		if per[lv] != 5 {
			t.Errorf("level %s: %d pairs, want 5 (%v)", lv, per[lv], per)
		}
		// Spread: as many distinct objects as the level has, up to 5.
		typ, _ := hwtree.ParseType(lv)
		if want := min(5, len(topo.Objects(typ))); len(objs[lv]) != want {
			t.Errorf("level %s: pairs under %d objects, want %d spread over the level", lv, len(objs[lv]), want)
		}
	}
	if len(pairs) != 20 {
		t.Fatalf("%d pairs, want 20", len(pairs))
	}
	if got := RepresentativePairs(topo, topo.CPUs(), 5, 6); len(got) > 6 {
		t.Fatalf("cap 6: %d pairs", len(got))
	}
	// A subset of CPUs: only pairs among them.
	sub := []int{0, 1, 2, 200}
	for _, p := range RepresentativePairs(topo, sub, 5, 100) {
		if !slices.Contains(sub, p.A) || !slices.Contains(sub, p.B) {
			t.Fatalf("pair %+v outside %v", p, sub)
		}
	}
}

// TestMeasureTreeBig measures a 256-CPU machine through an injected
// ping-pong: the pairs measured stay under the cap, each level's median is
// the level's latency with no spread and no disagreement, and FillByLevel
// gives every pair of the machine its true latency (checked against the
// fake over all 32640 pairs).
func TestMeasureTreeBig(t *testing.T) {
	topo := bigTopo(t)
	f := &fakeLatency{topo: topo, ns: bigNS}
	m, err := MeasureTree(context.Background(), topo, topo.CPUs(), Options{PingPong: f.pingPong, MaxPairs: 40})
	if err != nil {
		t.Fatal(err)
	}
	if f.calls > 40 || f.calls < 4 {
		t.Fatalf("%d pairs measured, want 4..40", f.calls)
	}
	lv := Levels(m, topo)
	if len(lv) != 4 {
		t.Fatalf("levels %+v", lv)
	}
	for _, l := range lv {
		typ, _ := hwtree.ParseType(l.Level)
		if l.MedianNs != bigNS[typ] || l.Spread() != 1 {
			t.Errorf("level %+v, want median %v and no spread", l, bigNS[typ])
		}
	}
	if d := Disagreements(m, topo); len(d) != 0 {
		t.Errorf("disagreements on a symmetric machine: %+v", d)
	}
	full := FillByLevel(m, topo)
	if err := full.Complete(); err != nil {
		t.Fatal(err)
	}
	f.calls = 0
	for i := range full.CPUs {
		for j := 0; j < i; j++ {
			want, _ := f.pingPong(full.CPUs[i], full.CPUs[j], measure.Options{})
			if full.NS[i][j] != want {
				t.Fatalf("filled %d-%d = %v, want %v", full.CPUs[i], full.CPUs[j], full.NS[i][j], want)
			}
		}
	}
	// 64 CPUs or fewer: every pair.
	f.calls = 0
	small := topo.CPUs()[:8]
	m, err = MeasureTree(context.Background(), topo, small, Options{PingPong: f.pingPong})
	if err != nil || f.calls != 28 || m.Complete() != nil {
		t.Fatalf("8 CPUs: %d pairs measured (want 28), %v", f.calls, err)
	}
}

// TestDisagreements: two L3s that behave as one (packages no slower than
// an L3) and a level with two kinds of link (some cross-package pairs much
// slower) are both reported, with the level named.
func TestDisagreements(t *testing.T) {
	topo := bigTopo(t)
	merged := map[hwtree.Type]float64{hwtree.Core: 10, hwtree.L3Cache: 30, hwtree.Package: 32, hwtree.Machine: 200}
	f := &fakeLatency{topo: topo, ns: merged}
	m, err := MeasureTree(context.Background(), topo, topo.CPUs(), Options{PingPong: f.pingPong})
	if err != nil {
		t.Fatal(err)
	}
	d := Disagreements(m, topo)
	if len(d) != 1 || d[0].Kind != "merged" || d[0].Level != "Package" || !strings.Contains(d[0].Detail, "L3Cache groups under one Package behave as one") {
		t.Fatalf("merged L3s: %+v", d)
	}
	// Pairs between packages 0-1 and 2-3 are far, the others near.
	f = &fakeLatency{topo: topo, ns: bigNS, odd: func(a, b int) (float64, bool) {
		l := f.lca(a, b)
		if l.Type == hwtree.Machine && (a < 128) != (b < 128) {
			return 400, true
		}
		return 0, false
	}}
	m, err = MeasureTree(context.Background(), topo, topo.CPUs(), Options{PingPong: f.pingPong, PerLevel: 12})
	if err != nil {
		t.Fatal(err)
	}
	d = Disagreements(m, topo)
	if len(d) != 1 || d[0].Kind != "bimodal" || d[0].Level != "Machine" {
		t.Fatalf("two kinds of cross-package link: %+v", d)
	}
	if lv := Levels(m, topo); lv[3].Spread() != 2 {
		t.Fatalf("machine level spread %v, want 2", lv[3].Spread())
	}
}

// TestMeasureTreeErrors: bad CPU lists and a failing or absurd ping-pong
// are errors, and a cancelled context stops.
func TestMeasureTreeErrors(t *testing.T) {
	topo := bigTopo(t)
	bad := func(a, b int, _ measure.Options) (float64, error) { return math.NaN(), nil }
	if _, err := MeasureTree(context.Background(), topo, topo.CPUs(), Options{PingPong: bad}); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("NaN latency: %v", err)
	}
	cpus := append(topo.CPUs(), 3)
	if _, err := MeasureTree(context.Background(), topo, cpus, Options{PingPong: bad}); err == nil || !strings.Contains(err.Error(), "repeated") {
		t.Errorf("repeated CPU: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &fakeLatency{topo: topo, ns: bigNS}
	if _, err := MeasureTree(ctx, topo, topo.CPUs(), Options{PingPong: f.pingPong}); err == nil || f.calls != 0 {
		t.Errorf("cancelled: %v after %d calls", err, f.calls)
	}
}
