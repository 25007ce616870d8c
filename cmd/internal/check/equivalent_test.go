package check

import (
	"testing"

	"github.com/barriertune/barriertune/results"
)

// hybridOf is a hybrid measurement with its composition.
func hybridOf(composition string, cpus []int, median float64) results.Measurement {
	h := m("hybrid", cpus, median)
	h.Composition = composition
	return h
}

// TestFlatHybridIsItsAlgorithm: a hybrid composed as one flat level of
// ALG is ALG run through the hybrid's code. Beside ALG measured on the
// same placement it neither wins a tie over ALG nor stands as its
// runner-up, nor is offered as the robust choice in ALG's place; on
// another placement, or with another fan-in, it is a candidate like any.
func TestFlatHybridIsItsAlgorithm(t *testing.T) {
	p, q := []int{0, 1, 0, 1}, []int{0, 1, 2, 3}
	ms := []results.Measurement{m("goroutine", p, 430), hybridOf("flat:goroutine", p, 430), m("cond", p, 700)}
	c := best(ms, nil)
	if c.Algorithm != "goroutine" || c.RunnerUp != "cond" {
		t.Errorf("best %s, runner-up %s; want goroutine, cond", c.Algorithm, c.RunnerUp)
	}
	if r := robust(ms); r == nil || r.Algorithm != "goroutine" {
		t.Errorf("robust %+v, want goroutine", r)
	}
	// Faster by more than the tie: still ALG, which it is.
	ms = []results.Measurement{m("dissemination", q, 100), hybridOf("flat:dissemination", q, 90), m("central", q, 200)}
	if c := best(ms, nil); c.Algorithm != "dissemination" || c.RunnerUp != "central" {
		t.Errorf("faster flat hybrid: best %s, runner-up %s", c.Algorithm, c.RunnerUp)
	}
	// Another fan-in is another barrier.
	tree := m("all-static-tree", q, 100)
	tree.FanIn = 4
	ms = []results.Measurement{tree, hybridOf("flat:all-static-tree(8)", q, 80)}
	if c := best(ms, nil); c.Algorithm != "hybrid" {
		t.Errorf("flat hybrid of another fan-in: best %s", c.Algorithm)
	}
	tree8 := tree
	tree8.FanIn = 8
	if c := best([]results.Measurement{tree8, hybridOf("flat:all-static-tree(8)", q, 80)}, nil); c.Algorithm != "all-static-tree" {
		t.Errorf("flat hybrid of the same fan-in: best %s", c.Algorithm)
	}
	// Composed of levels, or ALG not measured there: a candidate.
	ms = []results.Measurement{m("dissemination", q, 100), hybridOf("core:dissemination,top:central", q, 80), hybridOf("flat:goroutine", p, 70)}
	if c := best(ms, nil); c.Algorithm != "hybrid" || c.MedianNs != 70 {
		t.Errorf("levels or unmeasured ALG: best %s %.0f", c.Algorithm, c.MedianNs)
	}
}
