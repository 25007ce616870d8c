package model

import (
	"math"
	"strconv"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/latency"
)

// episode16 is one measured episode time on the 16-vCPU machine
// (testdata/vcpu16-measured.csv).
type episode16 struct {
	threads   int
	algorithm string
	measured  float64
	recorded  float64 // the old default model's prediction, as recorded
}

func readEpisodes16(t *testing.T) []episode16 {
	t.Helper()
	recs := readTestCSV(t, "testdata/vcpu16-measured.csv")
	var out []episode16
	for _, r := range recs[1:] {
		n, err1 := strconv.Atoi(r[0])
		m, err2 := strconv.ParseFloat(r[2], 64)
		p, err3 := strconv.ParseFloat(r[3], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("bad row %q", r)
		}
		out = append(out, episode16{n, r[1], m, p})
	}
	return out
}

// ranks gives each value its rank (1-based), ties sharing the mean rank.
func ranks(v []float64) []float64 {
	r := make([]float64, len(v))
	for i := range v {
		less, same := 0, 0
		for j := range v {
			switch {
			case v[j] < v[i]:
				less++
			case v[j] == v[i]:
				same++
			}
		}
		r[i] = float64(less) + float64(same+1)/2
	}
	return r
}

// spearman is the rank correlation: Pearson's correlation of the ranks.
func spearman(a, b []float64) float64 {
	ra, rb := ranks(a), ranks(b)
	mean := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	ma, mb := mean(ra), mean(rb)
	var sab, saa, sbb float64
	for i := range ra {
		sab += (ra[i] - ma) * (rb[i] - mb)
		saa += (ra[i] - ma) * (ra[i] - ma)
		sbb += (rb[i] - mb) * (rb[i] - mb)
	}
	return sab / math.Sqrt(saa*sbb)
}

func TestSpearman(t *testing.T) {
	for _, c := range []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1},
		{[]float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		{[]float64{1, 2, 3, 4, 5}, []float64{2, 1, 4, 3, 5}, 0.8}, // 1 - 6·4/(5·24)
		{[]float64{1, 2, 3}, []float64{1, 1, 2}, math.Sqrt(3) / 2},
	} {
		if got := spearman(c.a, c.b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("spearman(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// The default model on the 16-vCPU machine (testdata: its measured episode
// times and its reconstructed matrix, see testdata/README.md): the rank
// correlation between predicted and measured episode times of the ten
// spinning algorithms is at least 0.9 at 8 and 16 threads, and static-tree,
// measured fifth there, is not predicted first. The same data under the
// old constants (one latency per broadcast, k(68.5+5.5k) per counter)
// stays below 0.9 and predicts static-tree first: the test can fail.
func TestRankCorrelation16vCPU(t *testing.T) {
	m, err := latency.ReadCSVFile("testdata/vcpu16-matrix.csv")
	if err != nil {
		t.Fatal(err)
	}
	eps := readEpisodes16(t)
	old := DefaultParams()
	old.FlagRefetchFraction, old.CounterTransferFraction = 0, 0
	old.ContentionNs, old.ContentionGrowthNs = 68.5, 5.5
	rho := func(n int, prm Params) (float64, string) {
		var meas, pred []float64
		first, best := "", math.Inf(1)
		for _, e := range eps {
			if e.threads != n {
				continue
			}
			v, err := PredictWith(DefaultModel, e.algorithm, seq(n), m, 0, prm)
			if err != nil {
				t.Fatal(err)
			}
			if n == 16 && prm == old && math.Abs(v-e.recorded) > 0.05*e.recorded {
				t.Errorf("reconstructed matrix: old model predicts %s at %d threads %.0f ns, recorded %.0f (want within 5%%)", e.algorithm, n, v, e.recorded)
			}
			meas, pred = append(meas, e.measured), append(pred, v)
			if v < best {
				first, best = e.algorithm, v
			}
		}
		if len(meas) != 10 {
			t.Fatalf("%d threads: %d algorithms in testdata, want 10", n, len(meas))
		}
		return spearman(meas, pred), first
	}
	for _, n := range []int{4, 8, 16} {
		r, first := rho(n, DefaultParams())
		ro, firstOld := rho(n, old)
		t.Logf("%2d threads: rho %.2f (old %.2f), predicted first %s (old %s)", n, r, ro, first, firstOld)
		if n == 4 {
			continue // not a goal: recorded for docs/model.md
		}
		if r < 0.9 {
			t.Errorf("%d threads: rank correlation %.2f, want >= 0.9", n, r)
		}
		if first == "static-tree" {
			t.Errorf("%d threads: static-tree predicted first (measured fifth)", n)
		}
		if ro >= 0.9 || firstOld != "static-tree" {
			t.Errorf("%d threads: old model rho %.2f, first %s: the data no longer shows the old miss", n, ro, firstOld)
		}
	}
}
