package model

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/barriertune/barriertune/hwtree"
)

func TestPredictTable(t *testing.T) {
	tree, err := hwtree.FromSynthetic("pack:2 core:2 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	order := CompactOrder(tree, []int{7, 6, 5, 4, 3, 2, 1, 0, 42})
	if !slices.Equal(order, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("CompactOrder: %v (want tree order, CPUs the tree lacks left out)", order)
	}
	c := NewTreeCosts(tree)
	rows, err := PredictTable(context.Background(), c, tree, order, TableOptions{Kind: DefaultModel, Algorithm: "all"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 7 {
		t.Fatalf("%d rows, want one per count 2..8", len(rows))
	}
	for i, r := range rows {
		if r.Threads != i+2 || !slices.Equal(r.CPUs, order[:i+2]) || len(r.Predictions) != len(Algorithms())+1 {
			t.Errorf("row %d: %d threads on %v, %d predictions", i, r.Threads, r.CPUs, len(r.Predictions))
		}
		if !slices.IsSortedFunc(r.Predictions, func(a, b Prediction) int { return cmp.Compare(a.PredictedNs, b.PredictedNs) }) {
			t.Errorf("row %d not fastest first: %v", i, r.Predictions)
		}
		for _, p := range r.Predictions {
			want, _ := Predict(DefaultModel, p.Algorithm, r.CPUs, c, 0)
			if p.Algorithm == "hybrid" {
				comp, ns, _ := HybridFor(DefaultModel, tree, r.CPUs, c)
				if p.Composition != comp.String() || p.PredictedNs != ns {
					t.Errorf("row %d hybrid: %v, want %s %v", i, p, comp, ns)
				}
			} else if p.PredictedNs != want || p.Composition != "" {
				t.Errorf("row %d %s: %v, want %v", i, p.Algorithm, p, want)
			}
		}
	}
	// A fixed placement, oversubscribed, one algorithm.
	rows, err = PredictTable(context.Background(), c, tree, order, TableOptions{Kind: CriticalPathModel, Algorithm: "central", Threads: 3, CPUs: []int{0, 0, 4}})
	if err != nil || len(rows) != 1 || len(rows[0].Predictions) != 1 || rows[0].Predictions[0].PredictedNs != 2*c.Latency(0, 4) {
		t.Errorf("fixed placement: %v, %v", rows, err)
	}
	if got := Compact([]int{3, 5}, 5); !slices.Equal(got, []int{3, 5, 3, 5, 3}) {
		t.Errorf("Compact wraps: %v", got)
	}
	for _, o := range []TableOptions{
		{Kind: "bogus", Algorithm: "all"},
		{Kind: DefaultModel, Algorithm: "fastest"},
		{Kind: DefaultModel, Algorithm: "all", Threads: -1},
		{Kind: DefaultModel, Algorithm: "all", Threads: 2, CPUs: []int{0, 1, 2}},
	} {
		if _, err := PredictTable(context.Background(), c, tree, order, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := PredictTable(ctx, c, tree, order, TableOptions{Kind: DefaultModel, Algorithm: "all"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
