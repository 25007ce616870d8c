// Package catalog answers the tuner's questions about the barriers
// catalog from its entries (barriers.Algorithms): the names in catalog
// order, simplest first, each name's rank in it, which breaks ties
// between algorithms measured equally fast, and the catalog entry's facts
// by name.
package catalog

import "github.com/barriertune/barriertune/barriers"

// Names returns the algorithm names in catalog order.
func Names() []string {
	algs := barriers.Algorithms()
	out := make([]string, len(algs))
	for i, a := range algs {
		out[i] = a.Name
	}
	return out
}

// Rank returns name's index in catalog order, or the catalog's length for
// a name it does not hold (ranked after every algorithm).
func Rank(name string) int {
	algs := barriers.Algorithms()
	for i, a := range algs {
		if a.Name == name {
			return i
		}
	}
	return len(algs)
}

// TakesFanIn reports whether the algorithm called name takes a fan-in
// (barriers.WithFanIn shapes it): the catalog entry's FanIn.
func TakesFanIn(name string) bool {
	a, err := barriers.Lookup(name)
	return err == nil && a.FanIn
}

// Blocks reports whether the algorithm called name blocks whatever the
// waiting policy (the blocking baselines, cond and channel): the catalog
// entry's Spins is false.
func Blocks(name string) bool {
	a, err := barriers.Lookup(name)
	return err == nil && !a.Spins
}
