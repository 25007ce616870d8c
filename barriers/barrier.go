package barriers

import (
	"context"
	"errors"
)

// Barrier synchronises n participants.
type Barrier interface {
	// Wait blocks participant id until all n participants have called Wait
	// for the current episode. It panics if id is outside 0..n-1, and with
	// an error wrapping ErrBroken if the barrier is or becomes broken.
	Wait(id int)
	// WaitContext is Wait that ends early: it returns nil when the episode
	// completes; ctx.Err() when ctx ends first, which also breaks the
	// barrier (the others cannot complete the episode without this
	// participant); and an error wrapping ErrBroken when the barrier is or
	// becomes broken otherwise. A ctx whose Done is nil costs what Wait
	// costs.
	WaitContext(ctx context.Context, id int) error
	// Break breaks the barrier: every current waiter returns (WaitContext
	// with an error wrapping ErrBroken, Wait by panicking with it) within a
	// millisecond under every policy, and so does every later call until
	// Reset. Participants whose episode completed as Break ran may still
	// return normally from that episode. Break may be called any time,
	// from any goroutine, more than once.
	Break()
	// Reset repairs the barrier: all state returns to new, episode counts
	// included. It may be called only while no participant is inside Wait
	// or WaitContext (after every participant returned from the break).
	Reset()
	// N returns the number of participants.
	N() int
}

// MaxParticipants is the most participants a barrier takes: as many as the
// largest CPU set barriertune reads (65,536 CPUs). New refuses more before
// allocating anything; the tuner's thread counts share the cap.
const MaxParticipants = 1 << 16

// ErrBroken is wrapped by the error of every wait on a broken barrier.
var ErrBroken = errors.New("barrier is broken")

// Option configures a barrier at construction.
type Option func(*config)

type config struct {
	policy    Policy
	policySet bool // WithPolicy was given: BARRIERTUNE_WAIT_POLICY does not apply
	budget    int
	fanIn     int
	hierarchy Hierarchy // WithHierarchy, read by the hybrid only
}

// configOf applies opts over the defaults, then the environment's wait
// policy (WaitPolicyFromEnv) unless an option chose the policy.
func configOf(opts []Option) config {
	c := config{fanIn: DefaultFanIn, budget: -1}
	for _, o := range opts {
		o(&c)
	}
	if !c.policySet {
		if p, set := envWaitPolicy(); set {
			c.policy = p
			if p == Park && c.budget < 0 {
				c.budget = 0 // passive: no spinning
			}
		}
	}
	return c
}

// WithPolicy sets the waiting policy of a spinning algorithm (blocking
// baselines ignore it). The default is AutoPolicy, or the one
// BARRIERTUNE_WAIT_POLICY names (see WaitPolicyFromEnv); WithPolicy
// overrides the environment.
func WithPolicy(p Policy) Option { return func(c *config) { c.policy, c.policySet = p, true } }

// WithSpinBudget sets how many relax-hint iterations Yield, Park and AutoPolicy
// spin before yielding or blocking (0: none; negative: the default, which
// for AutoPolicy is a time bound, see AutoPolicy).
func WithSpinBudget(iterations int) Option { return func(c *config) { c.budget = iterations } }

// DefaultFanIn is the fan-in of the combining tree and the fan-out of the
// static trees when WithFanIn does not set one.
const DefaultFanIn = 4

// WithFanIn sets the fan-in of the combining tree and the fan-out of the
// static trees (default DefaultFanIn; at least 2).
func WithFanIn(k int) Option { return func(c *config) { c.fanIn = k } }
