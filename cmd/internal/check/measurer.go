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
// dry run plans with one), in three parts by job: the Clock the budget is
// kept by, the Machine measured (what it accepts, its fingerprint and
// block and wake-up cost for the file, what it costs and hosts), and the
// Instrument that measures it (floors, a placement's candidates, the
// per-level latencies, with which waiting policy). Hardware is the live
// one of each; ModelMeasurer the simulated one. Everything else (plan,
// pruning, rounds, selection, the file) is the same code, which asks the
// Measurer and never which kind it is.
type Measurer interface {
	Clock
	Machine
	Instrument
}

// Clock keeps a check's budget: the wall clock live, a simulated clock
// that the simulated measurements advance.
type Clock interface {
	// Now is the time the budget is kept by.
	Now() time.Time
	// Bound returns ctx ended at deadline where the budget is kept in wall
	// time, and Expired whether the clock is past deadline (a simulated
	// clock: its check has no wall-time deadline).
	Bound(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc)
	Expired(deadline time.Time) bool
}

// Machine is the machine a check measures, as the plan and the file see
// it.
type Machine interface {
	// Accept refuses a topology that cannot be measured (dry: one that is
	// only planned).
	Accept(topo *hwtree.Topology, dry bool) error
	// Fingerprint is the machine the measurements are of, for the results
	// file; simulated marks a simulated machine (and a file no library
	// takes for this host).
	Fingerprint(topo *hwtree.Topology) (m results.Machine, simulated bool)
	// BlockWake is the block and wake-up cost to record in the file (ok
	// false: none, and Auto estimates it itself).
	BlockWake() (d time.Duration, ok bool)
	// Costs are the machine's latencies when they are known before
	// measuring (a simulated one's), else nil.
	Costs() model.Costs
	// Hosts is how many threads this process can host when it runs them
	// itself (live); ok false when any count can be measured (simulated).
	Hosts() (h Hostable, ok bool)
}

// Instrument measures: floors, a placement's candidates and the per-level
// latencies, and says which waiting policy a placement's barriers get.
type Instrument interface {
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
	// CanPingPong reports whether floors can be measured.
	CanPingPong() bool
}

// Hardware is the live Measurer: the wall clock, this machine, pinned
// threads on it (measure.Barriers, measure.PingPongLatency).
type Hardware struct{}

// Now is the wall clock.
func (Hardware) Now() time.Time { return time.Now() }

// Bound ends ctx at deadline: the budget is wall time.
func (Hardware) Bound(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ctx, deadline)
}

// Expired is false: the context Bound returned ends a live check.
func (Hardware) Expired(time.Time) bool { return false }

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

// Fingerprint is this machine's fingerprint (CurrentMachine).
func (Hardware) Fingerprint(topo *hwtree.Topology) (results.Machine, bool) {
	return CurrentMachine(topo), false
}

// BlockWake measures the block and wake-up cost here (wake.BlockWake):
// none with GOMAXPROCS 1, or when the time runs out before 3 handoffs.
func (Hardware) BlockWake() (time.Duration, bool) {
	d, err := wake.BlockWake(wakeRounds, wakeLimit)
	return d, err == nil
}

// Costs is nil: the live machine's latencies are measured as the check
// goes.
func (Hardware) Costs() model.Costs { return nil }

// Hosts is HostableThreads: the live check runs every thread itself.
func (Hardware) Hosts() (Hostable, bool) { return HostableThreads(), true }

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

// Policy is measure.DefaultPolicy, kept to a policy that never reads a
// results file: spin when every thread has a CPU (and a P) of its own;
// AutoPolicy where the threads outnumber what this process runs at once
// (as programs run them: it parks at once there, without the block and
// wake-up cost a results file records); park where threads share a CPU
// but fit, where AutoPolicy would bound its spin by that recorded cost.
// The check writes a results file; it never measures through one.
func (Hardware) Policy(cpus cpuset.Placement) barriers.Policy {
	p := measure.DefaultPolicy(cpus)
	if p == barriers.AutoPolicy && !osal.Oversubscribed(len(cpus)) {
		return barriers.Park
	}
	return p
}

// CanPingPong needs two Ps: a ping-pong on one never overlaps.
func (Hardware) CanPingPong() bool { return runtime.GOMAXPROCS(0) >= 2 }

// acceptPlanned refuses a tree too large to plan or simulate.
func acceptPlanned(topo *hwtree.Topology) error {
	if n := len(topo.PUs()); n > maxPUs {
		return fmt.Errorf("check: the topology has %d PUs, more than the %d CPUs Linux on x86-64 boots with at most; planning and simulating accept 1..%d PUs", n, maxPUs, maxPUs)
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
