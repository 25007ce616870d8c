package barriers

import (
	"fmt"
	"runtime"
	"strings"
)

// Policy is how a participant waits for a flag another participant sets.
type Policy int

const (
	// AutoPolicy ("auto") chooses at construction. When the participants fit GOMAXPROCS
	// and the CPUs it is Yield with a long budget (2^16 relax hints): a
	// balanced barrier spins as fast as Spin, and a participant left
	// waiting long (a busy machine) yields. When they do not fit it is Park
	// with no spinning, so a waiter gives its CPU to the participant it
	// waits for at once. Either way it always makes progress.
	AutoPolicy Policy = iota
	// Spin busy-waits with the CPU's relax hint. It is the fastest on
	// pinned, dedicated threads and never gives the CPU up: with more
	// participants than CPUs an episode can cost scheduler ticks
	// (milliseconds).
	Spin
	// Yield spins for the budget, then calls runtime.Gosched between checks.
	// Nobody sleeps, so signals need no wakeup: they cost what Spin's do.
	Yield
	// Park spins for the budget, then blocks on the flag's condition
	// variable until the flag is set. Every signal then pays a store-load
	// fence (XCHG on amd64) and a check for sleepers.
	Park
)

var policyNames = []string{"auto", "spin", "yield", "park"}

// String returns the policy's name: auto, spin, yield or park.
func (p Policy) String() string {
	if p < 0 || int(p) >= len(policyNames) {
		return fmt.Sprintf("Policy(%d)", int(p))
	}
	return policyNames[p]
}

// ParsePolicy reads a policy name.
func ParsePolicy(s string) (Policy, error) {
	for i, n := range policyNames {
		if strings.EqualFold(s, n) {
			return Policy(i), nil
		}
	}
	return 0, fmt.Errorf("unknown waiting policy %q (accepted: %s)", s, strings.Join(policyNames, ", "))
}

// Spin budgets, in relax-hint iterations (PAUSE is 10-70 cycles).
const (
	// dedicatedSpinBudget is AutoPolicy's budget when participants fit the CPUs:
	// long enough that a balanced barrier never parks.
	dedicatedSpinBudget = 1 << 16
	// sharedSpinBudget is the default budget of Yield and Park: about a
	// microsecond, then the CPU goes to others.
	sharedSpinBudget = 64
	// oversubscribedSpinBudget is AutoPolicy's budget when participants outnumber
	// the CPUs: none, since every iteration spent spinning holds a CPU that
	// the participant being waited for needs.
	oversubscribedSpinBudget = 0
)

// oversubscribed reports whether n participants exceed GOMAXPROCS or the
// CPUs this process may use: then a spinning participant holds a CPU that
// another participant needs.
func oversubscribed(n int) bool {
	return n > runtime.GOMAXPROCS(0) || n > runtime.NumCPU()
}

// resolve turns AutoPolicy into a concrete policy and budget for n participants;
// budget < 0 means "not set".
func resolve(p Policy, budget, n int) (Policy, int) {
	if p == AutoPolicy {
		p, b := Yield, dedicatedSpinBudget
		if oversubscribed(n) {
			p, b = Park, oversubscribedSpinBudget
		}
		if budget < 0 {
			budget = b
		}
		return p, budget
	}
	if budget < 0 {
		budget = sharedSpinBudget
	}
	return p, budget
}
