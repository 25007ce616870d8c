// Package configsets enumerates the placements of t threads on a machine's
// PUs as configuration sets (Sharma and Sussman), deduplicated by the CPU
// tree's symmetry, counts them exactly without enumerating (Countable
// refuses trees too wide to count in about a minute), and chooses a small,
// labelled set of representative placements when there are too many to
// measure.
//
// Two methods:
//   - Paper: Algorithm 1 as written. A configuration is the subtree just above
//     the leaves (a leaf is a processor with its private L1); configurations
//     whose keys (children counts up the ancestor chain) and CPU kinds agree
//     are "same", and thread-count vectors that differ by a permutation of
//     same configurations merge.
//   - Exact (the default): a configuration set is an orbit of t-subsets of
//     PUs under the automorphism group of the attributed tree. The paper's key
//     merges placements a barrier tells apart at once (both threads in one
//     package versus one in each); the exact method never does.
package configsets

import (
	"fmt"
	"math/big"

	"github.com/barriertune/barriertune/hwtree"
)

// Method selects how placements are deduplicated.
type Method string

// The methods.
const (
	Exact Method = "exact"
	Paper Method = "paper"
)

// ParseMethod reads a method name.
func ParseMethod(s string) (Method, error) {
	switch Method(s) {
	case Exact, Paper:
		return Method(s), nil
	}
	return "", fmt.Errorf("unknown method %q (accepted: exact, paper)", s)
}

// poly is a polynomial with big integer coefficients: p[i] is the
// coefficient of x^i.
type poly []*big.Int

func one() poly { return poly{big.NewInt(1)} }

func (p poly) mul(q poly, maxDeg int) poly {
	n := min(len(p)+len(q)-1, maxDeg+1)
	out := make(poly, n)
	for i := range out {
		out[i] = new(big.Int)
	}
	var t big.Int
	for i, a := range p {
		if a.Sign() == 0 || i >= n {
			continue
		}
		for j, b := range q {
			if i+j >= n {
				break
			}
			out[i+j].Add(out[i+j], t.Mul(a, b))
		}
	}
	return out
}

func (p poly) add(q poly) poly {
	out := make(poly, max(len(p), len(q)))
	for i := range out {
		out[i] = new(big.Int)
		if i < len(p) {
			out[i].Add(out[i], p[i])
		}
		if i < len(q) {
			out[i].Add(out[i], q[i])
		}
	}
	return out
}

// stretch returns p(x^k), truncated to maxDeg.
func (p poly) stretch(k, maxDeg int) poly {
	out := make(poly, min((len(p)-1)*k, maxDeg)+1)
	for i := range out {
		out[i] = new(big.Int)
	}
	for i, a := range p {
		if i*k <= maxDeg {
			out[i*k].Set(a)
		}
	}
	return out
}

// multisets returns the generating function of multisets of m elements
// drawn from a weighted set with generating function f: Pólya's cycle index
// of the symmetric group, Z(S_m)(f(x), f(x²), …, f(x^m)), by the recurrence
// m·Z_m = Σ_{k=1..m} f(x^k)·Z_{m−k}. The division is exact.
func multisets(f poly, m, maxDeg int) poly {
	z := []poly{one()}
	for j := 1; j <= m; j++ {
		sum := poly{new(big.Int)}
		for k := 1; k <= j; k++ {
			sum = sum.add(f.stretch(k, maxDeg).mul(z[j-k], maxDeg))
		}
		div := big.NewInt(int64(j))
		for _, c := range sum {
			c.Quo(c, div)
		}
		z = append(z, sum)
	}
	return z[m]
}

// childClasses groups o's children by canonical form, in order of first
// appearance: each class is interchangeable under the tree's automorphisms.
func childClasses(o *hwtree.Object, forms map[*hwtree.Object]string) [][]*hwtree.Object {
	var out [][]*hwtree.Object
	class := map[string]int{} // canonical form -> 1 + its class's index in out
	for _, c := range o.Children {
		if class[forms[c]] == 0 {
			out = append(out, nil)
			class[forms[c]] = len(out)
		}
		i := class[forms[c]] - 1
		out[i] = append(out[i], c)
	}
	return out
}

// maxCountWork caps the work a count may take (countWork's estimate, in
// big-integer operations): about a minute on the 2-vCPU guest. 4,096 PUs
// as 64 packages of 64 cores are 2.2e8 (13 s); 2 packages of 512 cores
// 6.3e8 (24 s); 65,536 PUs as 256 of 256 would be 2e11, days.
const maxCountWork = 1e9

// multisetsWork estimates multisets' big-integer operations for m copies
// of a generating function of degree d: its recurrence multiplies f(x^k),
// d+1 nonzero terms, by Z_{j-k}, of degree up to d(j-k), for 1 <= k <= j
// <= m (the multiply-adds), and allocates polynomials of degree about dj
// for each (the allocations, which dominate for small d).
func multisetsWork(m, d int) float64 {
	fm, fd := float64(m), float64(d)+1
	return fm * fm * fm * (fd*fd/6 + 2*fd)
}

// countWork estimates what Counts (exact) or PaperCounts (paper) take on
// topo, in multiply-adds of big integers.
func countWork(topo *hwtree.Topology, method Method) float64 {
	if method == Paper {
		w := 0.0
		for _, class := range paperConfigurations(topo).classes() {
			w += multisetsWork(len(class.members), class.capacity)
		}
		return w
	}
	forms := topo.CanonicalForms()
	seen := map[string]bool{}
	w := 0.0
	var walk func(o *hwtree.Object)
	walk = func(o *hwtree.Object) {
		if seen[forms[o]] || o.Type == hwtree.PU {
			return
		}
		seen[forms[o]] = true
		for _, class := range childClasses(o, forms) {
			w += multisetsWork(len(class), class[0].CPUSet.Len())
			walk(class[0])
		}
	}
	walk(topo.Root)
	return w
}

// Countable reports why topo's configuration sets cannot be counted by
// method in reasonable time, or nil: the estimated work is over
// maxCountWork (trees of tens of thousands of PUs with wide levels).
func Countable(topo *hwtree.Topology, method Method) error {
	if w := countWork(topo, method); w > maxCountWork {
		return fmt.Errorf("counting the %s configuration sets of %d PUs would take about %.1e big-integer operations, more than the %.0e this tool spends (4,096 PUs in 64 packages: 2.2e8, 13 s): the counts of this tree are not computed", method, len(topo.PUs()), w, maxCountWork)
	}
	return nil
}

// Counts returns, for t = 0..number of PUs, the exact number of
// configuration sets (orbits of t-subsets of PUs under the tree's
// automorphisms), computed by generating functions without enumerating.
func Counts(topo *hwtree.Topology) []*big.Int {
	forms := topo.CanonicalForms()
	memo := map[string]poly{}
	var gf func(o *hwtree.Object) poly
	gf = func(o *hwtree.Object) poly {
		if p, ok := memo[forms[o]]; ok {
			return p
		}
		var p poly
		if o.Type == hwtree.PU {
			p = poly{big.NewInt(1), big.NewInt(1)}
		} else {
			deg := o.CPUSet.Len()
			p = one()
			for _, class := range childClasses(o, forms) {
				p = p.mul(multisets(gf(class[0]), len(class), deg), deg)
			}
		}
		memo[forms[o]] = p
		return p
	}
	return padded(gf(topo.Root), len(topo.PUs()))
}

func padded(p poly, n int) []*big.Int {
	out := make([]*big.Int, n+1)
	for i := range out {
		out[i] = new(big.Int)
		if i < len(p) {
			out[i].Set(p[i])
		}
	}
	return out
}

// PaperCounts returns, for t = 0..number of PUs, the number of
// configuration sets Algorithm 1 of the paper produces: per class of same
// configurations (m of them, each holding c threads), the multisets of m
// thread counts in 0..c; classes multiply.
func PaperCounts(topo *hwtree.Topology) []*big.Int {
	n := len(topo.PUs())
	p := one()
	for _, class := range paperConfigurations(topo).classes() {
		g := make(poly, class.capacity+1)
		for i := range g {
			g[i] = big.NewInt(1)
		}
		p = p.mul(multisets(g, len(class.members), n), n)
	}
	return padded(p, n)
}

// Total returns the sum of counts.
func Total(counts []*big.Int) *big.Int {
	s := new(big.Int)
	for _, c := range counts {
		s.Add(s, c)
	}
	return s
}
