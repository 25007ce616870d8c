package barriers_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/barriertune/barriertune/barriers"
)

// A hybrid barrier for 8 participants on two packages of two cores with two
// hardware threads each: SMT siblings meet first, then one representative
// per core, then one per package.
func ExampleWithHierarchy() {
	const n = 8
	// keys[l][i]: participant i's core, package and machine index.
	keys := [][]int{
		{0, 0, 1, 1, 2, 2, 3, 3}, // core
		{0, 0, 0, 0, 1, 1, 1, 1}, // package
	}
	specs, err := barriers.ParseHierarchy("core:dissemination, package:central")
	if err != nil {
		panic(err)
	}
	levels, err := barriers.Hierarchy(specs).Grouped(keys)
	if err != nil {
		panic(err)
	}
	b, err := barriers.New("hybrid", n, barriers.WithHierarchy(levels))
	if err != nil {
		panic(err)
	}
	var counts [n]int
	var wg sync.WaitGroup
	for id := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				counts[id]++
				b.Wait(id)
			}
		}()
	}
	wg.Wait()
	fmt.Println(barriers.Hierarchy(levels).String(), counts)
	// Output: core:dissemination,package:central [100 100 100 100 100 100 100 100]
}

// ParseHierarchy reads the composition a results file records; the
// levels get their groups from Hierarchy.Grouped.
func ExampleParseHierarchy() {
	levels, err := barriers.ParseHierarchy("core:dissemination, l3:combining(4), package:dissemination")
	if err != nil {
		panic(err)
	}
	for _, l := range levels {
		fmt.Println(l.Name, l.Algorithm, l.FanIn)
	}
	_, err = barriers.ParseHierarchy("core:fastest")
	fmt.Println(err != nil)
	// Output:
	// core dissemination 0
	// l3 combining 4
	// package dissemination 0
	// true
}

// Hierarchy.Grouped groups participants level by level; a level groups the
// representatives (lowest ids) of the level below.
func ExampleHierarchy_Grouped() {
	specs := []barriers.Level{{Name: "l3"}, {Name: "package"}}
	keys := [][]int{
		{0, 0, 0, 1, 1, 2}, // L3 of participants 0..5 (uneven groups)
		{0, 0, 0, 0, 0, 1}, // package
	}
	levels, err := barriers.Hierarchy(specs).Grouped(keys)
	if err != nil {
		panic(err)
	}
	for _, l := range levels {
		fmt.Println(l.Name, l.Groups)
	}
	// Output:
	// l3 [[0 1 2] [3 4] [5]]
	// package [[0 3] [5]]
}

// String writes levels in the form results files and the model use.
func ExampleHierarchy_String() {
	fmt.Println(barriers.Hierarchy([]barriers.Level{
		{Name: "core", Algorithm: "dissemination"},
		{Name: "l3", Algorithm: "combining", FanIn: 4},
	}).String())
	// Output: core:dissemination,l3:combining(4)
}

// TunedFrom reads an explicit results file; a missing one gives the
// documented fallback with the reason.
func ExampleTunedFrom() {
	t := barriers.TunedFrom(filepath.Join(os.TempDir(), "no-such-barriertune-results.json"), 2)
	fmt.Println(t.Source == "", t.Fallback != "")
	// Output: true true
}
