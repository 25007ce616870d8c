package hwtree_test

import (
	"fmt"

	"github.com/barriertune/barriertune/hwtree"
)

// A synthetic tree in hwloc's synthetic syntax: two packages of four cores
// with two PUs each, numbered depth-first.
func ExampleFromSynthetic() {
	t, err := hwtree.FromSynthetic("pack:2 core:4 pu:2")
	if err != nil {
		panic(err)
	}
	pus := t.PUs()
	fmt.Println(len(t.Objects(hwtree.Package)), "packages,", len(t.Objects(hwtree.Core)), "cores,", len(pus), "PUs")
	pkg := pus[9].Parent
	for pkg.Type != hwtree.Package {
		pkg = pkg.Parent
	}
	fmt.Println("PU", pus[9].OSIndex, "is in package", pkg.LogicalIndex)
	// Output:
	// 2 packages, 8 cores, 16 PUs
	// PU 9 is in package 1
}
