package configsets

import (
	"math"

	"github.com/barriertune/barriertune/hwtree"
)

// approxCounts is Counts in float64: exact while every sum that makes a
// count stays below 2^53 (they are integers, their terms never negative,
// and the recurrence divides m times the count by m: a count below
// 2^53/PUs is exact), otherwise within rounding of it, +Inf past
// float64's range. Deciding whether a count is at most a limit of
// MaxEnumerate or less needs no more, and costs a fraction of the big
// integers: the plan of an 8192-PU tree spent 1.6 s of its 4 s of CPU in
// Counts.
func approxCounts(topo *hwtree.Topology) []float64 {
	forms := topo.CanonicalForms()
	memo := map[string][]float64{}
	var gf func(o *hwtree.Object) []float64
	gf = func(o *hwtree.Object) []float64 {
		if p, ok := memo[forms[o]]; ok {
			return p
		}
		var p []float64
		if o.Type == hwtree.PU {
			p = []float64{1, 1}
		} else {
			deg := o.CPUSet.Len()
			p = []float64{1}
			for _, class := range childClasses(o, forms) {
				p = fmul(p, fmultisets(gf(class[0]), len(class), deg), deg)
			}
		}
		memo[forms[o]] = p
		return p
	}
	p := gf(topo.Root)
	out := make([]float64, len(topo.PUs())+1)
	copy(out, p)
	return out
}

// fmul is poly.mul in float64; zero terms are skipped on both sides, so
// that a coefficient past float64's range (+Inf) never meets a zero
// (NaN).
func fmul(p, q []float64, maxDeg int) []float64 {
	n := min(len(p)+len(q)-1, maxDeg+1)
	out := make([]float64, n)
	for i, a := range p {
		if a == 0 || i >= n {
			continue
		}
		for j, b := range q[:min(len(q), n-i)] {
			if b != 0 {
				out[i+j] += a * b
			}
		}
	}
	return out
}

// fmultisets is multisets in float64: m·Z_m = Σ_{k=1..m} f(x^k)·Z_{m−k},
// with f(x^k)'s nonzero terms alone multiplied (f(x^k) has at most
// len(f) of them).
func fmultisets(f []float64, m, maxDeg int) []float64 {
	z := [][]float64{{1}}
	for j := 1; j <= m; j++ {
		sum := make([]float64, min((len(f)-1)*j, maxDeg)+1)
		for k := 1; k <= j; k++ {
			prev := z[j-k]
			for i, a := range f {
				d := i * k
				if d > maxDeg {
					break
				}
				if a == 0 {
					continue
				}
				for e, b := range prev[:min(len(prev), maxDeg-d+1)] {
					if b != 0 {
						sum[d+e] += a * b
					}
				}
			}
		}
		for i := range sum {
			if !math.IsInf(sum[i], 0) {
				sum[i] /= float64(j)
			}
		}
		z = append(z, sum)
	}
	return z[m]
}
