package model

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/latency"
)

// uniform costs 1 ns between distinct CPUs.
type uniform float64

func (u uniform) Latency(a, b int) float64 {
	if a == b {
		return 0
	}
	return float64(u)
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// Every algorithm in barriers' catalog has a pattern. The hybrid's
// pattern depends on its composition: HybridPattern builds it
// (hybrid_test.go covers it).
func TestCatalogCovered(t *testing.T) {
	for _, name := range catalog.Names() {
		if name == "hybrid" {
			continue
		}
		if _, err := PatternOf(name, 5, 0); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The barrier property: after the last stage every participant has
// (transitively) heard from every participant, and no signal is a
// self-signal or out of range.
func TestPatternsSynchronise(t *testing.T) {
	for _, alg := range Algorithms() {
		for n := 1; n <= 70; n++ {
			for _, f := range []int{2, 3, 4, 8} {
				p, err := PatternOf(alg, n, f)
				if err != nil {
					t.Fatalf("%s n=%d f=%d: %v", alg, n, f, err)
				}
				know := make([]map[int]bool, n)
				for i := range know {
					know[i] = map[int]bool{i: true}
				}
				for si, st := range p {
					next := make([]map[int]bool, n)
					for i := range know {
						next[i] = map[int]bool{}
						for k := range know[i] {
							next[i][k] = true
						}
					}
					for _, s := range st {
						if s.From == s.To || s.From < 0 || s.To < 0 || s.From >= n || s.To >= n {
							t.Fatalf("%s n=%d f=%d stage %d: bad signal %v", alg, n, f, si, s)
						}
						for k := range know[s.From] {
							next[s.To][k] = true
						}
					}
					know = next
				}
				for i := range know {
					if len(know[i]) != n {
						t.Fatalf("%s n=%d f=%d: participant %d leaves having heard from %d of %d", alg, n, f, i, len(know[i]), n)
					}
				}
			}
		}
	}
}

// Golden values with 1 ns links: the stage counts of the textbook costs.
func TestCriticalPathGolden(t *testing.T) {
	cases := []struct {
		alg  string
		n, f int
		want float64
	}{
		{"dissemination", 8, 0, 3}, {"dissemination", 5, 0, 3}, {"central", 8, 0, 2},
		{"tournament", 8, 0, 6}, {"butterfly", 8, 0, 3}, {"butterfly", 6, 0, 3},
		{"pairwise", 8, 0, 3}, {"pairwise", 9, 0, 4}, {"binomial", 8, 0, 6},
		{"static-tree", 21, 4, 3}, {"all-static-tree", 21, 4, 4}, {"mcs", 7, 0, 4},
		{"dissemination", 1, 0, 0},
	}
	for _, c := range cases {
		got, err := Predict(CriticalPathModel, c.alg, seq(c.n), uniform(1), c.f)
		if err != nil || got != c.want {
			t.Errorf("%s n=%d f=%d: %v, %v; want %v", c.alg, c.n, c.f, got, err, c.want)
		}
	}
}

// canonicalDissemination is the formula anyone can recompute: in round k,
// participant i is done when it and its sender (i − 2^k) mod n are done
// with round k−1, plus the link from the sender.
func canonicalDissemination(L func(a, b int) float64, n int) float64 {
	t := make([]float64, n)
	for k := 0; 1<<k < n; k++ {
		u := make([]float64, n)
		for i := 0; i < n; i++ {
			from := ((i-1<<k)%n + n) % n
			u[i] = math.Max(t[i], t[from]+L(from, i))
		}
		t = u
	}
	m := 0.0
	for _, v := range t {
		m = math.Max(m, v)
	}
	return m
}

func TestDisseminationOnSharedMatrices(t *testing.T) {
	files, _ := filepath.Glob("../../../../shared/latency/*.csv")
	if len(files) == 0 {
		t.Skip("../shared/latency is absent")
	}
	for _, path := range files {
		m, err := latency.ReadCSVFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{2, 3, len(m.CPUs) / 2, len(m.CPUs)} {
			cpus := seq(n)
			got, err := Predict(CriticalPathModel, "dissemination", cpus, m, 0)
			if err != nil {
				t.Fatal(err)
			}
			want := canonicalDissemination(m.Latency, n)
			if math.Abs(got-want) > 0.01*want {
				t.Errorf("%s n=%d: predicted %.2f ns, canonical %.2f ns", filepath.Base(path), n, got, want)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		alg  string
		n, f int
	}{{"nope", 4, 0}, {"central", 0, 0}, {"central", barriers.MaxParticipants + 1, 0}, {"mcs", 4, 1}} {
		if _, err := PatternOf(c.alg, c.n, c.f); err == nil {
			t.Errorf("PatternOf(%q, %d, %d): no error", c.alg, c.n, c.f)
		}
	}
	if _, err := Predict("bogus", "central", seq(4), uniform(1), 0); err == nil {
		t.Error("unknown model accepted")
	}
}

// The default model never predicts below the critical path.
func TestDefaultAboveCriticalPath(t *testing.T) {
	for _, alg := range Algorithms() {
		cp, _ := Predict(CriticalPathModel, alg, seq(16), uniform(40), 0)
		d, _ := Predict(DefaultModel, alg, seq(16), uniform(40), 0)
		if d < cp {
			t.Errorf("%s: default %v < critical path %v", alg, d, cp)
		}
	}
}
