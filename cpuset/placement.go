package cpuset

import "runtime"

// Placement is a team's CPUs in rank order: rank i runs on CPU p[i]. A CPU
// repeats when the ranks outnumber the CPUs they are placed on
// (round-robin): the placement is then oversubscribed, and its ranks run
// as plain goroutines rather than pinned threads.
type Placement []int

// Oversubscribed reports whether n ranks outnumber what this process runs
// at once: GOMAXPROCS, or the CPUs it may use ([Usable]: its CPUs at
// start within its cgroup's cpuset and CPU quota). Each rank
// beyond them waits for a CPU that another rank holds, so a spinning rank
// delays the one it waits for. This is the one meaning of oversubscribed in
// this process; [Placement.Oversubscribed] is the placement's own half, and
// [Placement.OversubscribedHere] joins the two.
func Oversubscribed(n int) bool {
	return n > runtime.GOMAXPROCS(0) || n > Usable()
}

// OversubscribedHere reports whether p's ranks cannot each hold a CPU of
// their own in this process: a CPU holds more than one rank
// ([Placement.Oversubscribed]) or the ranks outnumber what the process runs
// at once ([Oversubscribed]). Such a team runs as plain goroutines and pure
// spinning is the wrong wait.
func (p Placement) OversubscribedHere() bool {
	return p.Oversubscribed() || Oversubscribed(len(p))
}

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
