package barriers

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/barriertune/barriertune/internal/osal"
)

// Policy is how a participant waits for a flag another participant sets.
//
// What each does on a busy machine (other processes want the CPUs): only a
// waiter that blocks gives its CPU to the operating system, which can then
// run the participant being waited for. runtime.Gosched yields to other
// goroutines of this process, not to other processes.
type Policy int

// AutoPolicy ("auto", the default) cannot stall. While the participants
// fit GOMAXPROCS and the CPUs, a waiter spins for a bounded time, then
// blocks until it is released, so the operating system can run the
// participant being waited for. The bound is twice what blocking and a
// wake-up cost on this machine (Tuning.BlockWake: measured by `barriertune
// check`, else estimated once per process) and adapts per barrier to the
// waits it sees; goroutines stop spinning while the kernel shows that it
// is futile (more tasks runnable than CPUs, or their threads waiting for
// one). A balanced episode on a quiet machine only spins, as Spin. When the
// participants outnumber GOMAXPROCS or the CPUs, a waiter blocks at once.
// WithSpinBudget(k), k >= 0, replaces the time bound by k relax hints.
const AutoPolicy Policy = 0

const (
	// Spin busy-waits with the CPU's relax hint and never gives the CPU
	// up. It is the fastest on pinned, dedicated CPUs (a pinned Team on CPUs
	// nothing else runs on). On a shared machine it can stall: a waiter
	// keeps its CPU while the participant it waits for is descheduled, so
	// an episode can cost a scheduler time slice (milliseconds, orders of
	// magnitude more than a balanced episode); with more participants
	// than CPUs, every episode can.
	Spin Policy = iota + 1
	// Yield spins for the budget, then calls runtime.Gosched between checks.
	// Nobody sleeps, so signals need no wakeup: they cost what Spin's do.
	// Gosched lets other goroutines run, not other processes: on a busy
	// machine Yield keeps its CPU like Spin does.
	Yield
	// Park spins for the budget, then blocks on the flag's condition
	// variable until the flag is set. Every signal then pays a store-load
	// fence (XCHG on amd64) and a check for sleepers. On a busy machine
	// it gives the CPU up after the budget, like AutoPolicy.
	Park
)

// bounded is how a waiter holds AutoPolicy resolved for participants that
// fit: spin for a bounded, adaptive time, then block (see flag.waitBounded).
const bounded = AutoPolicy

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

// Spin budgets, in relax-hint iterations (PAUSE is 10-140 cycles).
const (
	// sharedSpinBudget is the default budget of Yield and Park: about a
	// microsecond, then the CPU goes to others.
	sharedSpinBudget = 64
	// oversubscribedSpinBudget is AutoPolicy's budget when participants outnumber
	// the CPUs: none, since every iteration spent spinning holds a CPU that
	// the participant being waited for needs.
	oversubscribedSpinBudget = 0
)

// resolve turns AutoPolicy into a concrete waiter for n participants;
// budget < 0 means "not set".
func resolve(p Policy, budget, n int) waiter {
	if p == AutoPolicy {
		if osal.Oversubscribed(n) {
			if budget < 0 {
				budget = oversubscribedSpinBudget
			}
			return waiter{policy: Park, budget: budget}
		}
		w := waiter{policy: bounded, budget: budget}
		if budget < 0 {
			w.adapt = newAdaptive(blockWakeCost())
		}
		return w
	}
	if budget < 0 {
		budget = sharedSpinBudget
	}
	return waiter{policy: p, budget: budget}
}

// WaitPolicyEnv is the environment variable that sets the default wait
// policy of every barrier the process builds, as OMP_WAIT_POLICY does for
// OpenMP. It is read once per process, at the first construction.
const WaitPolicyEnv = "BARRIERTUNE_WAIT_POLICY"

// waitPolicyNames are WaitPolicyEnv's accepted values, in the order of
// waitPolicies.
var (
	waitPolicyNames = []string{"active", "passive", "auto"}
	waitPolicies    = []Policy{Yield, Park, AutoPolicy}
)

// WaitPolicyFromEnv reports the wait policy that $BARRIERTUNE_WAIT_POLICY
// sets for barriers built without WithPolicy (case-insensitive):
//
//   - active: Yield, spin for the budget, then runtime.Gosched between
//     checks; a waiter never sleeps and keeps its CPU (OpenMP's active).
//   - passive: Park with a spin budget of 0 unless WithSpinBudget sets one:
//     a waiter whose flag is not yet set sleeps at once (OpenMP's passive).
//   - auto: AutoPolicy, the default.
//
// set is false when the variable is unset or empty (AutoPolicy applies).
// An invalid value gives AutoPolicy, set false, and an error naming the
// value and the accepted ones; the first construction that reads it also
// writes that error to standard error, once per process.
func WaitPolicyFromEnv() (p Policy, set bool, err error) {
	e := &envPolicy
	e.once.Do(func() {
		v := strings.TrimSpace(os.Getenv(WaitPolicyEnv))
		if v == "" {
			return
		}
		for i, n := range waitPolicyNames {
			if strings.EqualFold(v, n) {
				e.p, e.set = waitPolicies[i], true
				return
			}
		}
		e.err = fmt.Errorf("%s=%q is not a wait policy (accepted: %s); using auto", WaitPolicyEnv, v, strings.Join(waitPolicyNames, ", "))
	})
	return e.p, e.set, e.err
}

// envPolicy caches WaitPolicyEnv's reading: a fact of the process, read
// once (with wakeCost and the results cache, the package's mutable state).
var envPolicy struct {
	once   sync.Once
	warned sync.Once
	p      Policy
	set    bool
	err    error
}

// envWaitPolicy is WaitPolicyFromEnv for the constructors: it warns once
// on standard error about an invalid value.
func envWaitPolicy() (Policy, bool) {
	p, set, err := WaitPolicyFromEnv()
	if err != nil {
		envPolicy.warned.Do(func() { fmt.Fprintf(os.Stderr, "barriertune: %v\n", err) })
	}
	return p, set
}
