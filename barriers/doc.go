// Package barriers holds thread-barrier algorithms for n participants and
// picks among them: the central counter, static and all-static trees, the
// combining tree, dissemination, tournament, the binomial spanning tree,
// butterfly, pairwise exchange, the MCS tree, the hybrid (a hierarchical
// composition, one algorithm per level of the CPU tree), the goroutine
// barrier (for more participants than GOMAXPROCS: a lock-free arrival
// counter, one yield, then parking), and two blocking baselines (sync.Cond
// and channels) that show what spinning buys. Algorithms lists them in
// catalog order.
//
// # Use
//
// Auto(n) builds the barrier `barriertune check` found fastest on this
// machine for n participants (a documented fallback without results);
// participant id, 0 <= id < n, calls Wait(id) once per step:
//
//	b, err := barriers.Auto(n) // this machine's choice for n participants
//	if err != nil {
//		return err
//	}
//	var wg sync.WaitGroup
//	for id := range n {
//		wg.Go(func() {
//			for step := range steps {
//				work(id, step) // write this participant's part of the step
//				b.Wait(id)     // every part of the step is written and visible
//			}
//		})
//	}
//	wg.Wait()
//
// barriers.Tuned(n) says what Auto chose and why; the examples (ExampleAuto,
// Example, ExampleTuning_Team: `go doc -http`, or pkg.go.dev) run whole
// programs.
//
// New(name, n, opts...) constructs any algorithm of the catalog
// (Algorithms, Lookup); Auto(n) constructs the one the install-time check
// (`barriertune check`) found fastest on this machine for n participants,
// with a documented fallback when there are no results for this machine.
// Participant id (0 <= id < n) calls Wait(id) once per episode; Wait
// returns when all n participants have called it for that episode. Wait is
// a full barrier: every write any participant made before its Wait is
// visible to every participant after its Wait. A participant's state lives
// in its own padded slot, so ids must be distinct and each id used by one
// goroutine at a time (the blocking baselines detect a second goroutine
// with the same id; the spinning algorithms cannot without slowing down).
//
// # Broken barriers
//
// A participant that fails would leave the others waiting forever, so
// every barrier can break: Break releases every waiter; WaitContext returns
// ctx.Err() to the caller whose context ended (and breaks the barrier) and
// an error wrapping ErrBroken to everyone else; Wait on a broken barrier
// panics with such an error; Reset repairs it once nobody waits. The
// checks cost nothing on the fast path. Team.RunBarrier breaks the
// barrier for you when a participant panics or returns early.
//
// # Which algorithm
//
// Measure: `barriertune check` times them all on this machine, and Auto
// uses the result. As a rule of thumb (see docs/algorithms.md):
//   - 2 to a few threads: dissemination or pairwise (fewest sequential
//     signals, no release phase).
//   - many threads on one socket: static-tree, mcs or tournament (local
//     spinning, few flags per thread).
//   - many sockets: all-static-tree or mcs (no global hot line), or the
//     hybrid composed for the tree (WithHierarchy; Auto rebuilds the one
//     the check measured).
//   - more participants than CPUs (or GOMAXPROCS): goroutine, which Auto
//     also picks there when the check measured nothing so (its waiters
//     yield once, then park, and one wake-up releases them all); cond is
//     the blocking baseline.
//
// # Which policy
//
// Spinning algorithms wait according to a Policy (WithPolicy). The
// default, AutoPolicy, cannot stall: while every participant has a CPU it
// spins for a bounded time, twice what blocking and a wake-up cost on this
// machine (Tuning.BlockWake: measured by `barriertune check` and recorded in
// the results file, else estimated once per process), then blocks, so the
// operating system can run the participant being waited for; the bound
// adapts per barrier to the waits it sees. A balanced episode on a quiet
// machine only spins and costs what Spin's does. When participants
// outnumber GOMAXPROCS or the CPUs it blocks at once (see Sharing CPUs
// below). Auto uses AutoPolicy
// unless the program asks for another, whatever the check measured with.
//
// Spin is for dedicated threads pinned one per CPU (a pinned Team on CPUs
// nothing else uses): on a shared machine a spinning waiter keeps its CPU
// while the participant it waits for is descheduled, and an episode can
// cost a scheduler time slice (milliseconds). Yield's runtime.Gosched
// yields to goroutines, not to other processes, so on a busy machine it
// behaves like Spin. Park gives the CPU up after a short spin, paying a
// store-load fence on every signal.
//
// BARRIERTUNE_WAIT_POLICY=active|passive|auto (WaitPolicyEnv), read once
// per process, sets the policy of barriers built without WithPolicy, as
// OMP_WAIT_POLICY does for OpenMP: active is Yield, passive is Park with
// no spin budget (unless WithSpinBudget gives one), auto is AutoPolicy.
// WithPolicy overrides it; an invalid value warns once on standard error
// and leaves AutoPolicy (WaitPolicyFromEnv says which applies, and so
// does `barriertune show`).
//
// Sharing CPUs. The process's CPUs are read once (those it
// was allowed at start, within its cgroup's cpuset and CPU quota), never
// from the calling thread's affinity. Participants that outnumber them or
// GOMAXPROCS at construction make AutoPolicy block at once (Park, no
// budget); and every AutoPolicy waiter past its first checks is counted
// process-wide: while that count exceeds the CPUs (or GOMAXPROCS), a wait
// does not spin (a goroutine yields once, then sleeps). Either changes how
// a participant waits, never the algorithm. Beside competing processes a
// barrier's goroutines stop spinning on the kernel's evidence and take
// turns on the Ps that run: a wait is then one yield (the partner queued
// on the same P runs, and the flag is set when the yielder comes back),
// with no clock read or system call on the way, so an episode costs about
// one goroutine switch, as a sync.Cond barrier's park and wake-up do
// (docs/algorithms.md, "Where the time goes").
//
// # Sleep and wake
//
// A waiter that sleeps is never left asleep by a setter that misses it:
// each policy orders the setter's store against its load of the sleepers,
// and the sleeper's announcement against its last check of the flag (no
// timer backs a sleep up). docs/algorithms.md, "Sharing CPUs", states the
// contract per policy.
package barriers
