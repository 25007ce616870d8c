package model

// PLACEHOLDER for helper "model"'s API (model.go, patterns.go): the types and
// functions model/hybrid.go calls, with the critical-path model of issue 9
// and the patterns of a few algorithms, so this branch builds and its tests
// run before model's branch is on main. Delete this file when merging
// model's branch: model's own files define every name below.

import (
	"fmt"
	"slices"
)

// Signal is one write by participant From that participant To awaits.
type Signal struct{ From, To int }

// Stage is the set of signals of one step.
type Stage []Signal

// Pattern is an algorithm's episode: its stages in order.
type Pattern []Stage

// Costs gives the one-way latency between two CPUs.
type Costs interface{ Latency(a, b int) float64 }

// Kind names a cost model.
type Kind string

// The cost models.
const (
	CriticalPathModel Kind = "critical-path"
	DefaultModel      Kind = "default"
)

// PatternOf returns the signal pattern of alg for n participants.
func PatternOf(alg string, n, fanIn int) (Pattern, error) {
	if fanIn == 0 {
		fanIn = 4
	}
	var p Pattern
	switch alg {
	case "dissemination":
		for k := 1; k < n; k *= 2 {
			var s Stage
			for i := 0; i < n; i++ {
				s = append(s, Signal{i, (i + k) % n})
			}
			p = append(p, s)
		}
	case "central":
		var up, down Stage
		for i := 1; i < n; i++ {
			up = append(up, Signal{i, 0})
			down = append(down, Signal{0, i})
		}
		if n > 1 {
			p = Pattern{up, down}
		}
	case "static-tree", "all-static-tree", "combining":
		depth := 0
		for i := 1; i < n; i++ {
			d := 0
			for j := i; j > 0; j = (j - 1) / fanIn {
				d++
			}
			depth = max(depth, d)
		}
		for d := depth; d >= 1; d-- {
			var s Stage
			for i := 1; i < n; i++ {
				dd := 0
				for j := i; j > 0; j = (j - 1) / fanIn {
					dd++
				}
				if dd == d {
					s = append(s, Signal{i, (i - 1) / fanIn})
				}
			}
			p = append(p, s)
		}
		rel := slices.Clone(p)
		slices.Reverse(rel)
		for _, s := range rel {
			var r Stage
			for _, sg := range s {
				r = append(r, Signal{sg.To, sg.From})
			}
			p = append(p, r)
		}
	default:
		return nil, fmt.Errorf("no pattern for %q in the placeholder", alg)
	}
	return p, nil
}

// CriticalPath is issue 9's critical-path model.
func CriticalPath(p Pattern, cpus []int, c Costs) float64 {
	f := make([]float64, len(cpus))
	next := make([]float64, len(cpus))
	for _, s := range p {
		copy(next, f)
		for _, sg := range s {
			if t := f[sg.From] + c.Latency(cpus[sg.From], cpus[sg.To]); t > next[sg.To] {
				next[sg.To] = t
			}
		}
		f, next = next, f
	}
	return slices.Max(append(f, 0))
}

// Predict predicts alg's episode on cpus.
func Predict(k Kind, alg string, cpus []int, c Costs, fanIn int) (float64, error) {
	p, err := PatternOf(alg, len(cpus), fanIn)
	if err != nil {
		return 0, err
	}
	return CriticalPath(p, cpus, c), nil
}
