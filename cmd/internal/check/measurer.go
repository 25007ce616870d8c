package check

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/internal/wake"
	"github.com/barriertune/barriertune/results"
)

// Measurer is all that differs between a live and a simulated check (a
// dry run plans with one): how a floor, a placement's candidates and the
// per-level latencies are measured, which waiting policy a placement
// gets, the machine's fingerprint and block and wake-up cost written to
// the file, which trees it accepts, and the clock the budget is kept by.
// Everything else (plan, pruning, rounds, selection, the file) is the same
// code, which asks the Measurer and never which kind it is.
type Measurer interface {
	// Floor is the one-way latency between CPUs a and b (a ping-pong).
	Floor(a, b int, opts measure.Options) (measure.PingPong, error)
	// Placement times the candidates on cpus (thread i on cpus[i]),
	// interleaved, with the floor beside them when opts.Floor asks.
	Placement(cpus cpuset.Placement, cands []measure.Candidate, opts measure.Options) (measure.Run, error)
	// LevelLatencies measures the per-level latencies of topo within
	// limit (with the floors already measured), and says what it skipped.
	LevelLatencies(ctx context.Context, topo *hwtree.Topology, opts measure.Options, limit time.Duration, floors []results.Floor) ([]results.LevelLatency, string)
	// Policy is the waiting policy the placement cpus is measured with.
	Policy(cpus cpuset.Placement) barriers.Policy
	// Now is the clock the budget is kept by.
	Now() time.Time
	// Machine fingerprints the machine the measurements are of, for the
	// results file; simulated marks a simulated machine (and a file no
	// library takes for this host).
	Machine(topo *hwtree.Topology) (m results.Machine, simulated bool)
	// BlockWake is the block and wake-up cost to record in the file (ok
	// false: none, and Auto estimates it itself).
	BlockWake() (d time.Duration, ok bool)
	// Accept refuses a topology the measurer cannot measure (dry: one that
	// is only planned).
	Accept(topo *hwtree.Topology, dry bool) error
	// Bound returns ctx ended at deadline where the budget is kept in wall
	// time, and Expired whether the measurer's own clock is past deadline
	// (a simulated clock: its check has no wall-time deadline).
	Bound(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc)
	Expired(deadline time.Time) bool
	// CanPingPong reports whether floors can be measured.
	CanPingPong() bool
	// Costs are the latencies of the measurer's machine when it knows
	// them before measuring (a simulated one's), else nil.
	Costs() model.Costs
}

// Hardware is the live Measurer: pinned threads on this machine
// (measure.Barriers, measure.PingPongLatency), the wall clock.
type Hardware struct{}

// Floor measures the ping-pong between a and b.
func (Hardware) Floor(a, b int, opts measure.Options) (measure.PingPong, error) {
	return measure.PingPongLatency(a, b, opts)
}

// Placement times the candidates on cpus with measure.Barriers.
func (Hardware) Placement(cpus cpuset.Placement, cands []measure.Candidate, opts measure.Options) (measure.Run, error) {
	return measure.Barriers(cpus, cands, opts)
}

// LevelLatencies measures representative pairs per level.
func (Hardware) LevelLatencies(ctx context.Context, topo *hwtree.Topology, opts measure.Options, limit time.Duration, floors []results.Floor) ([]results.LevelLatency, string) {
	return measureLevelLatencies(ctx, topo, nil, opts, limit, floors)
}

// Policy is measure.DefaultPolicy: spin when every thread has a CPU (and
// a P) of its own, else auto.
func (Hardware) Policy(cpus cpuset.Placement) barriers.Policy { return measure.DefaultPolicy(cpus) }

// Now is the wall clock.
func (Hardware) Now() time.Time { return time.Now() }

// Machine is this machine's fingerprint (CurrentMachine).
func (Hardware) Machine(topo *hwtree.Topology) (results.Machine, bool) {
	return CurrentMachine(topo), false
}

// BlockWake measures the block and wake-up cost here (wake.BlockWake):
// none with GOMAXPROCS 1, or when the time runs out before 3 handoffs.
func (Hardware) BlockWake() (time.Duration, bool) {
	d, err := wake.BlockWake(wakeRounds, wakeLimit)
	return d, err == nil
}

// Accept refuses a topology with CPUs this process may not run on (the
// check runs on the live machine); a plan accepts any tree up to maxPUs.
func (Hardware) Accept(topo *hwtree.Topology, dry bool) error {
	if dry {
		return acceptPlanned(topo)
	}
	allowed, err := osal.Allowed()
	if err != nil {
		return err
	}
	if !topo.Allowed().SubsetOf(allowed) {
		return fmt.Errorf("the topology's CPUs %s are not all allowed for this process (allowed: %s); the check runs on the live machine", topo.Allowed(), allowed)
	}
	return nil
}

// Bound ends ctx at deadline: the budget is wall time.
func (Hardware) Bound(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ctx, deadline)
}

// Expired is false: the context Bound returned ends a live check.
func (Hardware) Expired(time.Time) bool { return false }

// CanPingPong needs two Ps: a ping-pong on one never overlaps.
func (Hardware) CanPingPong() bool { return runtime.GOMAXPROCS(0) >= 2 }

// Costs is nil: the live machine's latencies are measured as the check
// goes.
func (Hardware) Costs() model.Costs { return nil }

// acceptPlanned refuses a tree too large to plan or simulate.
func acceptPlanned(topo *hwtree.Topology) error {
	if n := len(topo.PUs()); n > maxPUs {
		return fmt.Errorf("check: the topology has %d PUs; planning and simulating accept 1..%d", n, maxPUs)
	}
	return nil
}

// perCandidate is what one candidate (or floor) on one placement costs the
// check in one pass: its samples plus about eight calibration samples, and
// half again for teams, skew and calibration. The plan's estimate and the
// simulated clock both use it.
func perCandidate(samples int, target time.Duration) time.Duration {
	return time.Duration(samples+8) * target * 3 / 2
}
