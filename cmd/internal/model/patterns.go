package model

import (
	"fmt"
	"strings"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/internal/algname"
)

// The signal patterns: each algorithm's episode as the flags its
// participants set and await, stage by stage, which the cost model
// (model.go) prices.

// Signal is one flag set by participant From and awaited by participant To
// (ranks, not CPUs).
type Signal struct{ From, To int }

// Stage is the set of signals sent in one stage.
type Stage []Signal

// Pattern is an algorithm's episode as a sequence of stages.
type Pattern []Stage

// Costs gives the one-way latency in ns between two OS CPUs;
// *latency.Matrix implements it.
type Costs interface{ Latency(a, b int) float64 }

// DefaultFanIn is the tree fan-in used when 0 is given (barriers' default).
const DefaultFanIn = barriers.DefaultFanIn

func log2ceil(n int) int {
	r := 0
	for 1<<r < n {
		r++
	}
	return r
}

// Algorithms lists the algorithms PatternOf knows: barriers' catalog but
// the hybrid (a composition of them, see HybridPattern), in catalog order.
func Algorithms() []string {
	var out []string
	for _, a := range barriers.Algorithms() {
		if a.Name != algname.Hybrid {
			out = append(out, a.Name)
		}
	}
	return out
}

// PatternOf returns the signal pattern of one episode of algorithm alg for
// n participants, generated from the same parameters as the implementation
// in package barriers. fanIn (0: DefaultFanIn) is used by the trees. The
// blocking baselines (cond, channel) have central's pattern; their wake-up
// cost is added by the default model only.
func PatternOf(alg string, n, fanIn int) (Pattern, error) {
	if n < 1 || n > barriers.MaxParticipants {
		return nil, fmt.Errorf("model: %d participants; accepted 1 to %d", n, barriers.MaxParticipants)
	}
	if fanIn == 0 {
		fanIn = DefaultFanIn
	}
	if fanIn < 2 || fanIn > 64 {
		return nil, fmt.Errorf("model: fan-in %d; accepted 2 to 64 (0 for %d)", fanIn, DefaultFanIn)
	}
	if n == 1 {
		return Pattern{}, nil
	}
	switch alg {
	case algname.Central, algname.Goroutine, algname.Cond, algname.Channel:
		return central(n), nil
	case algname.Dissemination:
		return dissemination(n), nil
	case algname.Tournament:
		return tournament(n), nil
	case algname.Butterfly:
		return butterfly(n), nil
	case algname.Pairwise:
		return pairwise(n), nil
	case algname.StaticTree:
		return tree(n, func(i int) int { return (i - 1) / fanIn }, flat), nil
	case algname.AllStaticTree:
		return tree(n, func(i int) int { return (i - 1) / fanIn }, down), nil
	case algname.Combining:
		return combining(n, fanIn), nil
	case algname.MCS:
		p := tree(n, func(i int) int { return (i - 1) / 4 }, none)
		return append(p, downStages(n, func(i int) int { return (i - 1) / 2 })...), nil
	case algname.Binomial:
		return binomial(n), nil
	}
	return nil, fmt.Errorf("model: unknown algorithm %q (accepted: %s)", alg, strings.Join(Algorithms(), ", "))
}

// central: everyone increments a counter (modelled at rank 0's line), the
// last arriver (rank 0 in the model) releases everyone.
func central(n int) Pattern {
	var up, rel Stage
	for i := 1; i < n; i++ {
		up = append(up, Signal{i, 0})
		rel = append(rel, Signal{0, i})
	}
	return Pattern{up, rel}
}

// combining: each group of k consecutive ranks shares a counter; the last
// of a group to arrive goes on to the counter of its group of k consecutive
// groups, and so on up; the last at the root releases everyone through one
// flag (barriers' combining: rank i's leaf is i/k). A counter is a signal from each member to the
// one that completes it; the model takes the group's first member (lowest
// rank) as that last arriver, which it is when ranks arrive in descending
// order (the pattern test makes them); the implementation's is whoever
// arrives last.
func combining(n, k int) Pattern {
	var p Pattern
	members := seqInts(n)
	for len(members) > 1 {
		var st Stage
		var up []int
		for g := 0; g < len(members); g += k {
			grp := members[g:min(g+k, len(members))]
			for _, m := range grp[1:] {
				st = append(st, Signal{m, grp[0]})
			}
			up = append(up, grp[0])
		}
		p = append(p, st)
		members = up
	}
	var rel Stage
	for i := 1; i < n; i++ {
		rel = append(rel, Signal{0, i})
	}
	return append(p, rel)
}

// dissemination: stage k, i signals (i + 2^k) mod n.
func dissemination(n int) Pattern {
	var p Pattern
	for k := 0; k < log2ceil(n); k++ {
		var s Stage
		for i := 0; i < n; i++ {
			s = append(s, Signal{i, (i + 1<<k) % n})
		}
		p = append(p, s)
	}
	return p
}

// tournament: in round r the loser i (bit r set, lower bits clear) signals
// winner i − 2^r; wake-up retraces the rounds in reverse.
func tournament(n int) Pattern {
	R := log2ceil(n)
	p := make(Pattern, 2*R)
	for r := 0; r < R; r++ {
		for w := 0; w < n; w += 1 << (r + 1) {
			if l := w + 1<<r; l < n {
				p[r] = append(p[r], Signal{l, w})
				p[2*R-1-r] = append(p[2*R-1-r], Signal{w, l})
			}
		}
	}
	return p
}

// butterfly: stage s, identity v signals v XOR 2^s; identities >= n are
// played by v − q/2. Signals between a participant and itself are dropped.
func butterfly(n int) Pattern {
	R := log2ceil(n)
	q := 1 << R
	owner := func(v int) int {
		if v < n {
			return v
		}
		return v - q/2
	}
	var p Pattern
	// A participant plays at most two identities (v and v + q/2), so it
	// sends at most two signals a stage: sent holds the first one's
	// destination, to drop a repeat without a map (the plan of an 8192-PU
	// tree spent 0.3 s in one).
	sent := make([]int, n)
	for s := 0; s < R; s++ {
		for i := range sent {
			sent[i] = -1
		}
		st := make(Stage, 0, n)
		for v := 0; v < q; v++ {
			sig := Signal{owner(v), owner(v ^ 1<<s)}
			if sig.From == sig.To || sent[sig.From] == sig.To {
				continue
			}
			if sent[sig.From] < 0 {
				sent[sig.From] = sig.To
			}
			st = append(st, sig)
		}
		p = append(p, st)
	}
	return p
}

// pairwise: participants i >= y (y the largest power of two <= n) report
// to i − y, the y lower ones exchange with i XOR 2^r, then release i + y.
func pairwise(n int) Pattern {
	y, R := 1, 0
	for y*2 <= n {
		y, R = y*2, R+1
	}
	var p Pattern
	if n > y {
		var s Stage
		for i := y; i < n; i++ {
			s = append(s, Signal{i, i - y})
		}
		p = append(p, s)
	}
	for r := 0; r < R; r++ {
		var s Stage
		for i := 0; i < y; i++ {
			s = append(s, Signal{i, i ^ 1<<r})
		}
		p = append(p, s)
	}
	if n > y {
		var s Stage
		for i := y; i < n; i++ {
			s = append(s, Signal{i - y, i})
		}
		p = append(p, s)
	}
	return p
}

type release int

const (
	none release = iota // no release stages
	flat                // one global flag from the root
	down                // down the same tree
)

func depths(n int, parent func(int) int) ([]int, int) {
	d := make([]int, n)
	max := 0
	for i := 1; i < n; i++ {
		d[i] = d[parent(i)] + 1
		if d[i] > max {
			max = d[i]
		}
	}
	return d, max
}

// tree: arrival up the tree given by parent (children finish first: a node
// at depth d signals in stage maxDepth − d), then the release.
func tree(n int, parent func(int) int, rel release) Pattern {
	d, D := depths(n, parent)
	p := make(Pattern, D)
	for i := 1; i < n; i++ {
		p[D-d[i]] = append(p[D-d[i]], Signal{i, parent(i)})
	}
	switch rel {
	case flat:
		var s Stage
		for i := 1; i < n; i++ {
			s = append(s, Signal{0, i})
		}
		p = append(p, s)
	case down:
		p = append(p, downStages(n, parent)...)
	}
	return p
}

func downStages(n int, parent func(int) int) Pattern {
	d, D := depths(n, parent)
	p := make(Pattern, D)
	for i := 1; i < n; i++ {
		p[d[i]-1] = append(p[d[i]-1], Signal{parent(i), i})
	}
	return p
}

// binomial: i's parent is i − lowbit(i); a child with lowest bit 2^k
// reports in stage k and is woken in stage 2R−1−k.
func binomial(n int) Pattern {
	R := log2ceil(n)
	p := make(Pattern, 2*R)
	for i := 1; i < n; i++ {
		k := 0
		for i&(1<<k) == 0 {
			k++
		}
		par := i - 1<<k
		p[k] = append(p[k], Signal{i, par})
		p[2*R-1-k] = append(p[2*R-1-k], Signal{par, i})
	}
	return p
}
