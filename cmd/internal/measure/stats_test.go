package measure

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/results"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestSummarizeHandComputed checks every statistic against values worked
// out by hand (see the comments).
func TestSummarizeHandComputed(t *testing.T) {
	// Sorted: 10 11 12 13 14 100. Q1 = 11 + 0.25·1 = 11.25, Q3 = 13 +
	// 0.75·1 = 13.75, IQR 2.5, fences 3.75 and 21.25: 100 is an outlier.
	// Kept 10..14: mean 12, variance (4+1+0+1+4)/4 = 2.5. Median (12+13)/2.
	// CI ranks: 3 ∓ 0.98·√6 = 0.5995, 5.4005 -> floor 0, ceil 6 clamped to 5.
	s := []float64{100, 12, 10, 14, 11, 13}
	orig := slices.Clone(s)
	got := Summarize(s)
	want := Stats{N: 6, Summary: results.Summary{Outliers: 1, MeanNs: 12, StddevNs: math.Sqrt(2.5), MinNs: 10, MedianNs: 12.5, MaxNs: 100, CILowNs: 10, CIHighNs: 100}}
	if !statsEqual(got, want) {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
	if !slices.Equal(s, orig) {
		t.Errorf("Summarize changed its input: %v", s)
	}

	// 1..21: no outliers, mean 11, variance 2·(1²+…+10²)/20 = 770/20,
	// median 11, CI ranks 10.5 ∓ 4.491 -> 6 and 15, values 7 and 16.
	var v []float64
	for i := 21; i >= 1; i-- {
		v = append(v, float64(i))
	}
	got = Summarize(v)
	want = Stats{N: 21, Summary: results.Summary{MeanNs: 11, StddevNs: math.Sqrt(38.5), MinNs: 1, MedianNs: 11, MaxNs: 21, CILowNs: 7, CIHighNs: 16}}
	if !statsEqual(got, want) {
		t.Errorf("Summarize(1..21) = %+v, want %+v", got, want)
	}

	// One sample: no spread, no outlier.
	got = Summarize([]float64{5})
	want = Stats{N: 1, Summary: results.Summary{MeanNs: 5, MinNs: 5, MedianNs: 5, MaxNs: 5, CILowNs: 5, CIHighNs: 5}}
	if !statsEqual(got, want) {
		t.Errorf("Summarize([5]) = %+v, want %+v", got, want)
	}
	if got := Summarize(nil); got != (Stats{}) {
		t.Errorf("Summarize(nil) = %+v, want zero", got)
	}
	// Low outliers are dropped too: Q1 = 10.25 (h = 1.25 between 10 and 11)...
	got = Summarize([]float64{-50, 10, 11, 12, 13, 14})
	if got.Outliers != 1 || !near(got.MeanNs, 12) {
		t.Errorf("low outlier: %+v, want 1 outlier and mean 12", got)
	}
}

func statsEqual(a, b Stats) bool {
	return a.N == b.N && a.Outliers == b.Outliers && near(a.MeanNs, b.MeanNs) && near(a.StddevNs, b.StddevNs) &&
		near(a.MinNs, b.MinNs) && near(a.MedianNs, b.MedianNs) && near(a.MaxNs, b.MaxNs) &&
		near(a.CILowNs, b.CILowNs) && near(a.CIHighNs, b.CIHighNs)
}

// TestSummarizeBruteForceOutliers compares the fence rule with a direct
// count for many random-looking sets.
func TestSummarizeBruteForceOutliers(t *testing.T) {
	x := uint64(12345)
	for trial := 0; trial < 200; trial++ {
		n := 1 + trial%40
		s := make([]float64, n)
		for i := range s {
			x = x*6364136223846793005 + 1442695040888963407
			s[i] = float64(x>>40) / float64(1<<24) * 100
			if x%7 == 0 {
				s[i] *= 50 // a heavy tail
			}
		}
		v := slices.Clone(s)
		slices.Sort(v)
		q := func(p float64) float64 { // type 7, written differently
			pos := p * float64(n-1)
			lo, hi := math.Floor(pos), math.Ceil(pos)
			return v[int(lo)]*(1-(pos-lo)) + v[int(hi)]*(pos-lo)
		}
		iqr := q(0.75) - q(0.25)
		out := 0
		for _, y := range v {
			if y < q(0.25)-3*iqr || y > q(0.75)+3*iqr {
				out++
			}
		}
		if got := Summarize(s); got.Outliers != out || got.N != n {
			t.Fatalf("trial %d: %d outliers of %d, brute force %d", trial, got.Outliers, got.N, out)
		}
	}
}

// TestCompare checks the significance decision on synthetic samples.
func TestCompare(t *testing.T) {
	seq := func(from, step float64, n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = from + step*float64(i)
		}
		return s
	}
	fast, slow := seq(100, 1, 21), seq(150, 1, 21)
	if c := Compare(fast, slow); !c.Significant || c.P >= Alpha || c.N1 != 21 || c.N2 != 21 {
		t.Errorf("separated samples: %+v, want significant", c)
	}
	// Interleaved: 100, 102, ... against 101, 103, ...: pure noise.
	if c := Compare(seq(100, 2, 21), seq(101, 2, 21)); c.Significant {
		t.Errorf("interleaved samples: %+v, want not significant (a tie)", c)
	}
	// Three samples each cannot reach p < 0.05 even fully separated.
	if c := Compare(seq(1, 1, 3), seq(100, 1, 3)); c.Significant {
		t.Errorf("3+3 samples: %+v, want not significant", c)
	}
	// A 1% shift with a 10% spread is noise; a 1% shift with no spread is not.
	noisy := []float64{100, 110, 95, 105, 90, 108, 97, 103, 92, 101, 99}
	shifted := make([]float64, len(noisy))
	for i, x := range noisy {
		shifted[i] = x * 1.01
	}
	if c := Compare(noisy, shifted); c.Significant {
		t.Errorf("1%% shift in 10%% noise: %+v, want a tie", c)
	}
	if c := Compare(seq(100, 0.01, 11), seq(101, 0.01, 11)); !c.Significant {
		t.Errorf("1%% shift without noise: %+v, want significant", c)
	}
	a := []float64{3, 1, 2}
	Compare(a, []float64{6, 5, 4})
	if !slices.Equal(a, []float64{3, 1, 2}) {
		t.Errorf("Compare sorted its input: %v", a)
	}
	if c := Compare(nil, fast); c.Significant {
		t.Errorf("empty sample: %+v, want not significant", c)
	}
}

// TestSkew runs a skewed barrier on one thread, whose only rank is the
// late one: every episode spins the skew inside the timed region, so no
// sample may be negative once the skew is subtracted.
func TestSkew(t *testing.T) {
	cpus := []int{0}
	if _, err := Barriers(cpus, []Candidate{{Algorithm: "central", Policy: barriers.Spin}}, Options{Skew: -time.Microsecond}); err == nil {
		t.Error("negative skew accepted")
	}
	if _, err := Barriers(cpus, []Candidate{{Algorithm: "central", Policy: barriers.Spin}}, Options{Skew: MaxSkew + 1}); err == nil {
		t.Error("skew over MaxSkew accepted")
	}
	skew := 20 * time.Microsecond
	run, err := Barriers(cpus, []Candidate{{Algorithm: "central", Policy: barriers.Spin}},
		Options{Skew: skew, Samples: 5, SampleTarget: 100 * time.Microsecond})
	if err != nil {
		t.Skipf("cannot run on CPU 0: %v", err)
	}
	r := run.Results[0]
	if r.SkewNs != 20000 || r.Reps != 5 {
		t.Errorf("SkewNs %v, Reps %d; want 20000 and 5", r.SkewNs, r.Reps)
	}
	for _, s := range r.Samples {
		if s < 0 {
			t.Errorf("sample %v ns after subtracting a %v skew the episode contains: negative", s, skew)
		}
	}
}
