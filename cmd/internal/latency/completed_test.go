package latency

import (
	"math"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/hwtree"
)

// Completed: without a tree, the clustered one; on a tree, unmeasured
// pairs take their level's median; a pair still unknown is an error.
func TestCompleted(t *testing.T) {
	full, err := ReadCSV(strings.NewReader(",,,\n20,,,\n100,100,,\n100,100,20,\n"))
	if err != nil {
		t.Fatal(err)
	}
	m, tree, err := Completed(full, nil)
	if err != nil || len(tree.PUs()) != 4 || m.Latency(0, 3) != 100 {
		t.Fatalf("clustered: %v, %v", tree, err)
	}
	// Pair (1,3) not measured: on the two-package tree it takes the
	// cross-package median, 100.
	gap, err := ReadCSV(strings.NewReader(",,,\n20,,,\n100,100,,\n100,,20,\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(gap.Latency(1, 3)) {
		t.Fatalf("the gap is measured: %v", gap.Latency(1, 3))
	}
	topo, err := hwtree.FromSynthetic("pack:2 core:2 pu:1")
	if err != nil {
		t.Fatal(err)
	}
	m, tree, err = Completed(gap, topo)
	if err != nil || tree != topo || m.Latency(1, 3) != 100 {
		t.Fatalf("filled on its tree: %v (tree %p, want %p), %v", m.Latency(1, 3), tree, topo, err)
	}
	if _, _, err := Completed(gap, nil); err == nil {
		t.Error("a matrix with an unknown pair and no tree to fill it: no error")
	}
}
