package cpuset

import (
	"slices"
	"testing"
)

// Oversubscribed and CPUs against a brute-force count of every placement
// of up to 4 ranks on CPUs 0-2 (and a negative and a large CPU).
func TestPlacementBruteForce(t *testing.T) {
	cpus := []int{0, 1, 2, -1, 70000}
	var walk func(p Placement)
	walk = func(p Placement) {
		repeats := false
		for i := range p {
			for j := range i {
				repeats = repeats || p[i] == p[j]
			}
		}
		if got := p.Oversubscribed(); got != repeats {
			t.Errorf("%v.Oversubscribed() = %v, want %v", p, got, repeats)
		}
		d := p.CPUs()
		for _, c := range p {
			if !slices.Contains(d, c) {
				t.Errorf("%v.CPUs() = %v misses %d", p, d, c)
			}
		}
		if len(d) == len(p) == repeats {
			t.Errorf("%v.CPUs() = %v: %d distinct with repeats %v", p, d, len(d), repeats)
		}
		if len(p) == 4 {
			return
		}
		for _, c := range cpus {
			walk(append(slices.Clone(p), c))
		}
	}
	walk(nil)
}
