package cpuset

// Placement is a team's CPUs in rank order: rank i runs on CPU p[i]. A CPU
// repeats when the ranks outnumber the CPUs they are placed on
// (round-robin): the placement is then oversubscribed, and its ranks run
// as plain goroutines rather than pinned threads.
type Placement []int

// Oversubscribed reports whether a CPU holds more than one rank: the
// placement is oversubscribed on any machine. It reads p alone, so it also
// speaks of machines other than this one (results files, models).
func (p Placement) Oversubscribed() bool {
	seen := make(map[int]bool, len(p))
	for _, c := range p {
		if seen[c] {
			return true
		}
		seen[c] = true
	}
	return false
}

// CPUs returns the distinct CPUs of p in order of first appearance.
func (p Placement) CPUs() []int {
	seen := make(map[int]bool, len(p))
	var out []int
	for _, c := range p {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}
