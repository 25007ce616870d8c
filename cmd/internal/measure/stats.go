package measure

import (
	"math"
	"slices"

	"github.com/barriertune/barriertune/results"
	"golang.org/x/perf/benchmath"
)

// Stats are the statistics reported for one set of samples, as EPCC
// syncbench reports them: mean and standard deviation (of the samples kept
// after dropping outliers), min, median and max (of all samples), the
// number of outliers dropped and a confidence interval for the median.
//
// The Summary: Outliers is how many samples lie outside Tukey's far-out
// fences [Q1 − 3·IQR, Q3 + 3·IQR] (quartiles by linear interpolation
// between order statistics), left out of MeanNs and StddevNs (sample
// standard deviation, n−1) only; MinNs, MedianNs and MaxNs are over all
// samples (the median is robust to outliers already, and the extremes
// show what happened); CILowNs and CIHighNs bound the median with about
// 95% confidence: the order statistics of ranks ⌊n/2 − 0.98√n⌋ and
// ⌈n/2 + 0.98√n⌉ (0-based, clamped), the normal approximation of the
// binomial.
type Stats struct {
	results.Summary
	// N is the number of samples, outliers included.
	N int
}

// OutlierFence is the multiple of the interquartile range beyond the
// quartiles past which a sample is an outlier (Tukey's "far out").
const OutlierFence = 3.0

// Summarize computes the statistics of samples (ns per episode), leaving
// samples unchanged. All fields are zero when samples is empty.
func Summarize(samples []float64) Stats {
	v := slices.Clone(samples)
	slices.Sort(v)
	n := len(v)
	st := Stats{N: n}
	if n == 0 {
		return st
	}
	st.MinNs, st.MaxNs, st.MedianNs = v[0], v[n-1], Median(v)
	h := 0.98 * math.Sqrt(float64(n))
	lo := max(int(math.Floor(float64(n)/2-h)), 0)
	hi := min(int(math.Ceil(float64(n)/2+h)), n-1)
	st.CILowNs, st.CIHighNs = v[lo], v[hi]

	q1, q3 := quantile(v, 0.25), quantile(v, 0.75)
	iqr := q3 - q1
	lowFence, highFence := q1-OutlierFence*iqr, q3+OutlierFence*iqr
	var sum float64
	kept := 0
	for _, x := range v {
		if x < lowFence || x > highFence {
			st.Outliers++
			continue
		}
		sum += x
		kept++
	}
	st.MeanNs = sum / float64(kept) // kept >= 1: the quartiles lie inside the fences
	if kept > 1 {
		var ss float64
		for _, x := range v {
			if x >= lowFence && x <= highFence {
				ss += (x - st.MeanNs) * (x - st.MeanNs)
			}
		}
		st.StddevNs = math.Sqrt(ss / float64(kept-1))
	}
	return st
}

// quantile is the p-quantile of the sorted v by linear interpolation
// between order statistics (Hyndman & Fan type 7, as R's default).
func quantile(v []float64, p float64) float64 {
	h := float64(len(v)-1) * p
	i := int(math.Floor(h))
	if i+1 >= len(v) {
		return v[len(v)-1]
	}
	return v[i] + (h-float64(i))*(v[i+1]-v[i])
}

// Alpha is the significance level below which Compare calls two sets of
// samples different.
const Alpha = 0.05

// Comparison is the outcome of a significance test between two sets of
// samples.
type Comparison struct {
	// P is the p-value of the Mann-Whitney U test (two-sided) of the
	// hypothesis that both sets come from the same distribution.
	P float64
	// N1 and N2 are the sample sizes.
	N1, N2 int
	// Significant is P < Alpha: the difference is real, not noise.
	Significant bool
}

// Compare tests whether samples a and b differ, with the Mann-Whitney U
// test of golang.org/x/perf/benchmath (the test benchstat uses; no
// assumption about the distribution). With fewer than 4 samples on both
// sides no difference can be significant at Alpha = 0.05. Neither slice is
// changed.
func Compare(a, b []float64) Comparison {
	th := benchmath.DefaultThresholds
	th.CompareAlpha = Alpha
	sa := benchmath.NewSample(slices.Clone(a), &th)
	sb := benchmath.NewSample(slices.Clone(b), &th)
	c := benchmath.AssumeNothing.Compare(sa, sb)
	return Comparison{P: c.P, N1: len(a), N2: len(b), Significant: len(a) > 0 && len(b) > 0 && c.P < Alpha}
}
