package configsets

import (
	"math"
	"math/big"
	"testing"

	"github.com/barriertune/barriertune/hwtree"
)

// TestApproxCountsAreCounts: the float64 counts the space decides with
// are the exact counts wherever those are below 2^40 (the recurrence's
// sums, m times a count, stay below 2^53), within rounding above, and
// +Inf only past float64's range, on trees of 1 to 512 PUs.
func TestApproxCountsAreCounts(t *testing.T) {
	for _, syn := range []string{"pu:1", "core:2 pu:2", "pack:2 core:3 pu:2", "pack:2 l3:2 core:4 pu:2",
		"pack:3 numa:2 core:5 pu:1", "pack:4 l3:16 core:4 pu:2", "pack:2 core:64 pu:2", "pack:2 l3:4 core:32 pu:2"} {
		topo, err := hwtree.FromSynthetic(syn)
		if err != nil {
			t.Fatal(err)
		}
		if Countable(topo, Exact) != nil {
			t.Fatalf("%q: not countable", syn)
		}
		exact, approx := Counts(topo), approxCounts(topo)
		if len(exact) != len(approx) {
			t.Fatalf("%q: %d exact counts, %d approximate", syn, len(exact), len(approx))
		}
		limit := new(big.Int).Lsh(big.NewInt(1), 40)
		small := 0
		for i, e := range exact {
			a := approx[i]
			if e.Cmp(limit) < 0 {
				small++
				if !e.IsInt64() || float64(e.Int64()) != a {
					t.Errorf("%q, %d threads: %v, exact %s", syn, i, a, e)
				}
				continue
			}
			f, _ := new(big.Float).SetInt(e).Float64()
			if math.IsInf(f, 0) != math.IsInf(a, 0) || !math.IsInf(f, 0) && math.Abs(a/f-1) > 1e-9 {
				t.Errorf("%q, %d threads: %g, exact %.6g", syn, i, a, f)
			}
		}
		if small < 2 {
			t.Errorf("%q: %d counts below 2^40: the test proves little", syn, small)
		}
	}
}
