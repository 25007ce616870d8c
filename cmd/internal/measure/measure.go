// Package measure times barriers the way the tuner needs: on pinned, locked
// OS threads (or plain goroutines when the threads outnumber the CPUs),
// after a warm-up, with episodes per sample calibrated to a target time,
// candidates interleaved sample by sample, in an order shuffled afresh
// each round, so that drift on a shared machine hits them all alike, and the median, extremes and a confidence interval
// of the median reported in nanoseconds per episode.
//
// Summarize reports what EPCC syncbench reports (mean and standard
// deviation without outliers, min, median, max, outliers dropped, a
// confidence interval of the median); Compare tells a real difference from
// noise with the Mann-Whitney U test. Options.Skew delays the last rank's
// arrival to measure synchronisation time under process skew.
//
// Both `barriertune bench` and the install-time check use it.
package measure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/results"
)

// Candidate is one barrier configuration to time.
type Candidate struct {
	// Algorithm is a name from catalog.Names().
	Algorithm string
	// Policy is the waiting policy (ignored by the blocking baselines).
	Policy barriers.Policy
	// FanIn is the tree algorithms' fan-in (barriers.WithFanIn); 0 takes
	// the algorithm's default.
	FanIn int
	// Hierarchy composes the hybrid (barriers.WithHierarchy): its levels,
	// lowest first, with their groups. Other algorithms ignore it.
	Hierarchy barriers.Hierarchy
}

// options are the barrier options the candidate is built with.
func (c Candidate) options() []barriers.Option {
	opts := []barriers.Option{barriers.WithPolicy(c.Policy)}
	if c.FanIn > 0 {
		opts = append(opts, barriers.WithFanIn(c.FanIn))
	}
	if len(c.Hierarchy) > 0 {
		opts = append(opts, barriers.WithHierarchy(c.Hierarchy))
	}
	return opts
}

// composition is what Result.Composition records for the candidate.
func (c Candidate) composition() string {
	if c.Algorithm != algname.Hybrid || len(c.Hierarchy) == 0 {
		return ""
	}
	return barriers.Hierarchy(c.Hierarchy).String()
}

// Options tune a measurement. Zero values take the defaults.
type Options struct {
	// SampleTarget is the time one sample should take (default 200µs):
	// long enough to swamp the clock's cost, short enough that many
	// samples fit and a scheduler hiccup spoils only one.
	SampleTarget time.Duration
	// Samples is the number of samples per candidate (default 21).
	Samples int
	// DropFactor drops a candidate once its median exceeds DropFactor
	// times the best median so far, after MinSamples samples (0: never).
	DropFactor float64
	// MinSamples is how many samples a candidate gets before it may be
	// dropped (default 5).
	MinSamples int
	// Floor also measures the floor (PingPongLatency) between the first two
	// CPUs, interleaved with the candidates in the same run: one floor
	// sample in each round of candidate samples, its instances at places
	// in the round that change from round to round (ignored when the
	// placement has fewer than two distinct CPUs or is oversubscribed).
	Floor bool
	// Instances times each candidate as that many separately allocated
	// barriers (default 1): every sample runs an equal share of its
	// episodes on each in turn, so the sample is their average. Where a
	// barrier sits in memory can make one instance run 1.5-2 times slower
	// than another of the same algorithm in the same process (central: 150,
	// 183 and 276 ns in one interleaved run, docs/results.md), and a
	// program meets one instance: the average of a few ranks the
	// algorithm, not the luck of its allocation. Ignored with Skew.
	Instances int
	// Context stops sampling early when done; results keep what was
	// measured (Reps tells how much).
	Context context.Context
	// Skew makes the last rank arrive late: before each of its arrivals it
	// spins for Skew, and the reported times are the episode time minus
	// Skew, i.e. how long the barrier takes to release everyone after the
	// late arrival (Hoefler's synchronisation time under skew). The
	// floor is never skewed. At most MaxSkew.
	Skew time.Duration
	// OSThreads runs every participant on an OS thread of its own (locked,
	// unpinned where the placement is oversubscribed), as a C or C++
	// program's threads run: a participant that blocks then sleeps in the
	// kernel instead of parking in the Go scheduler.
	OSThreads bool
	// MayEndEmpty lets a cancelled Context stop the first round too: a
	// workload may then end with no sample (Reps 0). Without it every
	// workload takes at least one sample, which a caller that writes
	// every result needs.
	MayEndEmpty bool
}

// MaxSkew caps Options.Skew: longer delays measure the delay, not the
// barrier.
const MaxSkew = 10 * time.Millisecond

func (o *Options) defaults() {
	if o.SampleTarget <= 0 {
		o.SampleTarget = 200 * time.Microsecond
	}
	if o.Samples <= 0 {
		o.Samples = 21
	}
	if o.MinSamples <= 0 {
		o.MinSamples = 5
	}
	if o.Context == nil {
		o.Context = context.Background()
	}
}

// Result is one candidate's measurement.
type Result struct {
	Algorithm string `json:"algorithm"`
	Policy    string `json:"policy"`
	Threads   int    `json:"threads"`
	// FanIn and Composition are the candidate's fan-in (0: the default)
	// and, for a hybrid, its levels as barriers.Hierarchy.String writes them.
	FanIn       int    `json:"fan_in,omitempty"`
	Composition string `json:"composition,omitempty"`
	CPUs        []int  `json:"cpus"`
	// Pinned is false when the threads outnumbered the CPUs (or
	// GOMAXPROCS) and ran as plain goroutines.
	Pinned bool `json:"pinned"`
	// Summary is the samples' statistics (Summarize).
	results.Summary
	// SkewNs is the delay the last rank waited before each arrival (bench
	// --skew); the times above are then the episode time minus SkewNs.
	SkewNs float64 `json:"skew_ns,omitempty"`
	// Reps is the number of samples taken; each sample is
	// EpisodesPerRep episodes.
	Reps           int  `json:"reps"`
	EpisodesPerRep int  `json:"episodes_per_rep"`
	Dropped        bool `json:"dropped,omitempty"`
	// Samples are the per-sample ns-per-episode values, for pooling
	// several runs (Summarise).
	Samples []float64 `json:"-"`
}

// Summarise fills a result's statistics from its Samples.
func (r *Result) Summarise() {
	r.setStats(Summarize(r.Samples))
}

func (r *Result) setStats(s Stats) {
	r.Summary, r.Reps = s.Summary, s.N
}

// team returns the team a placement runs on. The CPUs must be allowed
// even when the team runs unpinned: a CPU outside the set is a mistake.
func team(cpus cpuset.Placement) (*osal.Team, error) {
	if allowed, err := osal.Allowed(); err == nil {
		for _, c := range cpus {
			if !allowed.Has(c) {
				return nil, fmt.Errorf("CPU %d is not allowed for this process (allowed CPUs: %s)", c, allowed)
			}
		}
	}
	if osal.OversubscribedHere(cpus) {
		return osal.NewUnpinnedTeam(len(cpus))
	}
	return osal.NewTeam(cpus)
}

// workload is something run k episodes at a time by every rank.
type workload struct {
	run     func(rank, k int)
	divisor float64 // time units per episode (2 for a ping-pong round trip)
	keep    bool    // never dropped (the floor)
	// share is the fraction of Options.SampleTarget one sample of it
	// takes (0: all): the floor's instances share one sample's time.
	share  float64
	offset float64 // ns subtracted from each per-episode time (the skew)
}

// fraction is the share of the sample target the workload's samples take.
func (w workload) fraction() float64 {
	if w.share > 0 {
		return w.share
	}
	return 1
}

// skewed is barrier b with rank late spinning for skew before each
// arrival; the skew is subtracted from the per-episode time.
func skewed(b barriers.Barrier, late int, skew time.Duration) workload {
	d := skew.Nanoseconds()
	return workload{divisor: 1, offset: float64(d), run: func(rank, k int) {
		for j := 0; j < k; j++ {
			if rank == late {
				for t0 := osal.Nanotime(); osal.Nanotime()-t0 < d; {
					osal.Relax()
				}
			}
			b.Wait(rank)
		}
	}}
}

// Run is the outcome of Barriers: one result per candidate, in order, and
// the floor when Options.Floor asked for it and the placement allows it.
type Run struct {
	Results []Result
	Floor   *PingPong
	// FloorSamples are the floor's samples, round by round: a candidate's
	// sample j was taken in the same round as FloorSamples[j] (a dropped
	// candidate's samples are a prefix of the rounds).
	FloorSamples []float64
}

// Barriers times each candidate on the placement cpus (thread i on
// cpus[i]).
func Barriers(cpus cpuset.Placement, cands []Candidate, opts Options) (Run, error) {
	if len(cpus) == 0 {
		return Run{}, errors.New("measure: no CPUs to run on")
	}
	if len(cands) == 0 {
		return Run{}, errors.New("measure: no candidates")
	}
	if opts.Skew < 0 || opts.Skew > MaxSkew {
		return Run{}, fmt.Errorf("measure: skew %v out of range (want 0 to %v)", opts.Skew, MaxSkew)
	}
	if opts.Instances < 0 || opts.Instances > MaxInstances {
		return Run{}, fmt.Errorf("measure: %d instances per candidate (want 0 to %d)", opts.Instances, MaxInstances)
	}
	n := len(cpus)
	works := make([]workload, 0, len(cands)+1)
	for _, c := range cands {
		var bs []barriers.Barrier
		for range max(opts.Instances, 1) {
			b, err := barriers.New(c.Algorithm, n, c.options()...)
			if err != nil {
				if comp := c.composition(); comp != "" {
					return Run{}, fmt.Errorf("measure %s %s: %w", c.Algorithm, comp, err)
				}
				return Run{}, fmt.Errorf("measure %s: %w", c.Algorithm, err)
			}
			bs = append(bs, b)
		}
		if opts.Skew > 0 {
			works = append(works, skewed(bs[0], n-1, opts.Skew))
			continue
		}
		works = append(works, instancesWorkload(bs))
	}
	floor := opts.Floor && n >= 2 && cpus[0] != cpus[1] && !osal.OversubscribedHere(cpus)
	if floor {
		fws, err := floorWorkloads()
		if err != nil {
			return Run{}, err
		}
		works = append(works, fws...)
	}
	samples, eps, dropped, err := sample(cpus, works, opts)
	if err != nil {
		return Run{}, err
	}
	var run Run
	for i, c := range cands {
		r := summarise(samples[i])
		r.Algorithm, r.Policy, r.Threads = c.Algorithm, c.Policy.String(), n
		r.FanIn, r.Composition = c.FanIn, c.composition()
		r.CPUs, r.Pinned = append([]int(nil), cpus...), !osal.OversubscribedHere(cpus)
		r.EpisodesPerRep, r.Dropped, r.Samples = eps[i], dropped[i], samples[i]
		r.SkewNs = float64(opts.Skew.Nanoseconds())
		run.Results = append(run.Results, r)
	}
	if floor {
		fs := floorSamples(samples[len(cands):])
		pp := pingPongResult(cpus[0], cpus[1], fs)
		run.Floor, run.FloorSamples = &pp, fs
	}
	return run, nil
}

// MaxInstances caps Options.Instances.
const MaxInstances = 16

// instancesWorkload runs k episodes as equal shares on each barrier of
// bs in turn (the first ones take the remainder), the same on every rank,
// so one sample's time per episode is the instances' average.
func instancesWorkload(bs []barriers.Barrier) workload {
	if len(bs) == 1 {
		b := bs[0]
		return workload{divisor: 1, run: func(rank, k int) {
			for j := 0; j < k; j++ {
				b.Wait(rank)
			}
		}}
	}
	return workload{divisor: 1, run: func(rank, k int) {
		for i, b := range bs {
			share := k / len(bs)
			if i < k%len(bs) {
				share++
			}
			for j := 0; j < share; j++ {
				b.Wait(rank)
			}
		}
	}}
}

// PingPong is the one-way core-to-core latency between two CPUs: the
// time one barrier flag signal takes from one to the other (see
// PingPongLatency).
type PingPong struct {
	CPUs     [2]int  `json:"cpus"`
	MedianNs float64 `json:"median_ns"`
	MinNs    float64 `json:"min_ns"`
	MaxNs    float64 `json:"max_ns"`
	Reps     int     `json:"reps"`
}

// FloorAlgorithm is the barrier whose two-thread episode is the floor:
// with two participants a dissemination barrier is one round in which each
// thread sets the other's flag and waits for its own, i.e. exactly one
// flag signal each way, both travelling at once. No barrier between two
// CPUs can do with fewer signals, so none beats it except by noise.
const FloorAlgorithm = algname.Dissemination

// PingPongLatency measures the floor between CPUs a and b: the episode
// time of a two-thread spinning FloorAlgorithm barrier on threads pinned
// there (each sample the fastest of floorInstances barriers timed in the
// same round), i.e. the one-way latency of a barrier flag signal, measured with
// the barriers' own flag code (one writer per padded flag, release store,
// spin on load). A half round trip of a flag bounced between the two
// threads would measure the same signal in theory, but on a 2-vCPU
// VM it read 1.1 to 1.2 times the two-thread dissemination and pairwise
// barriers, so it was no floor there (docs/results.md, "The floor").
// The check's and bench's floor and `barriertune latency` all measure
// with this function.
func PingPongLatency(a, b int, opts Options) (PingPong, error) {
	if a == b {
		return PingPong{}, fmt.Errorf("ping-pong needs two different CPUs, got %d and %d", a, b)
	}
	if runtime.GOMAXPROCS(0) < 2 {
		return PingPong{}, fmt.Errorf("ping-pong needs GOMAXPROCS >= 2, have %d", runtime.GOMAXPROCS(0))
	}
	fws, err := floorWorkloads()
	if err != nil {
		return PingPong{}, err
	}
	samples, _, _, err := sample([]int{a, b}, fws, opts)
	if err != nil {
		return PingPong{}, err
	}
	return pingPongResult(a, b, floorSamples(samples)), nil
}

func pingPongResult(a, b int, samples []float64) PingPong {
	r := summarise(samples)
	return PingPong{CPUs: [2]int{a, b}, MedianNs: r.MedianNs, MinNs: r.MinNs, MaxNs: r.MaxNs, Reps: r.Reps}
}

// floorInstances is how many floor barriers are timed side by side, each
// round's floor sample being the fastest of theirs: on a 2-vCPU VM
// one barrier instance in about ten ran a whole run 2 to 3 times slower
// than another instance of the same algorithm in the same process (where
// it sits in memory; never the same across runs), and a floor must not be
// that one. The least of a round's samples also errs low under noise,
// which a floor may.
const floorInstances = 3

// floorWorkloads are the floor: floorInstances separately allocated
// two-thread spinning FloorAlgorithm barriers, each a workload in which
// ranks 0 and 1 run episodes and other ranks sit out; together they take
// one sample's time per round, as one floor did. One episode is one
// signal each way, so the time per episode is the one-way latency.
func floorWorkloads() ([]workload, error) {
	var ws []workload
	for range floorInstances {
		b, err := barriers.New(FloorAlgorithm, 2, barriers.WithPolicy(barriers.Spin))
		if err != nil {
			return nil, fmt.Errorf("floor barrier: %w", err)
		}
		ws = append(ws, workload{divisor: 1, keep: true, share: 1.0 / floorInstances, run: func(rank, k int) {
			if rank > 1 {
				return
			}
			for j := 0; j < k; j++ {
				b.Wait(rank)
			}
		}})
	}
	return ws, nil
}

// floorSamples are the floor's samples, round by round: the least of the
// floor instances' samples of each round.
func floorSamples(perInstance [][]float64) []float64 {
	if len(perInstance) == 0 {
		return nil
	}
	rounds := len(perInstance[0])
	for _, s := range perInstance {
		rounds = min(rounds, len(s))
	}
	out := make([]float64, rounds)
	for j := range out {
		out[j] = perInstance[0][j]
		for _, s := range perInstance[1:] {
			out[j] = min(out[j], s[j])
		}
	}
	return out
}

// control is what rank 0 decides and every rank reads after the control
// barrier: plain fields, made visible by the barrier's full fence.
type control struct {
	next int    // calibration: the next k to try, 0 when settled
	k    []int  // episodes per sample, per workload
	skip []bool // dropped workloads
	stop bool
}

// sample runs the workloads interleaved on a team and returns, per
// workload, the ns-per-episode samples, the episodes per sample, and
// whether it was dropped.
func sample(cpus cpuset.Placement, works []workload, opts Options) ([][]float64, []int, []bool, error) {
	opts.defaults()
	tm, err := team(cpus)
	if err != nil {
		return nil, nil, nil, err
	}
	n := len(cpus)
	ctl, err := barriers.New(algname.Central, n, barriers.WithPolicy(controlPolicy(cpus)))
	if err != nil {
		return nil, nil, nil, err
	}
	c := &control{k: make([]int, len(works)), skip: make([]bool, len(works))}
	samples := make([][]float64, len(works))
	orders := roundOrders(opts.Samples, len(works))
	target := float64(opts.SampleTarget.Nanoseconds())
	err = tm.Run(func(rank int) {
		if opts.OSThreads {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
		}
		// Warm up and calibrate each workload: double k until one run of
		// k episodes takes the target time, twice in a row (calibrate).
		for i, w := range works {
			reached := false // rank 0's: the last run took the target time
			for k := 1; ; k = c.next {
				ctl.Wait(rank)
				t0 := osal.Nanotime()
				w.run(rank, k)
				if rank == 0 {
					c.next, reached = calibrate(k, float64(osal.Nanotime()-t0), target*w.fraction(), reached)
					if opts.Context.Err() != nil {
						// Stopping: settle on this k (a workload's first
						// runs are of one episode), so that every
						// workload still takes its one sample soon; or
						// stop now where a workload may end empty.
						c.next = 0
						c.stop = opts.MayEndEmpty
					}
					if c.next == 0 {
						c.k[i] = k
					}
				}
				ctl.Wait(rank)
				if c.stop {
					return
				}
				if c.next == 0 {
					break
				}
			}
		}
		for s := 0; s < opts.Samples; s++ {
			for _, i := range orders[s] {
				w := works[i]
				ctl.Wait(rank)
				if c.stop {
					return
				}
				if c.skip[i] {
					continue
				}
				// An untimed burst of an eighth of the sample first, then
				// a common start. Threads that just slept in a blocking
				// candidate (cond, channel, a parking policy) resume
				// slowly on a loaded VM; without the burst the workload
				// after them (the floor, or the next round's first
				// candidate) paid for it: the floor once read 8 times a
				// two-thread dissemination barrier in the same run.
				w.run(rank, warmup(c.k[i]))
				ctl.Wait(rank)
				t0 := osal.Nanotime()
				w.run(rank, c.k[i])
				if rank == 0 {
					el := float64(osal.Nanotime() - t0)
					samples[i] = append(samples[i], el/float64(c.k[i])/w.divisor-w.offset)
					// Read by every rank after the next control barrier:
					// once every workload has a sample, a long round (an
					// episode of hundreds of OS threads takes
					// milliseconds) stops after this one, not at its end.
					c.stop = (s > 0 || opts.MayEndEmpty) && opts.Context.Err() != nil
				}
			}
			// Every rank has read this round's control; only now may rank
			// 0 change it (a skipped workload or the ping-pong, which
			// ranks >= 2 sit out, leaves no barrier in between).
			ctl.Wait(rank)
			if rank == 0 {
				c.stop = opts.Context.Err() != nil
				drop(samples, c.skip, works, opts)
			}
		}
		ctl.Wait(rank)
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return samples, c.k, c.skip, nil
}

// calibrate is one step of a workload's calibration: after a run of k
// episodes took el ns against a sample's target, the next k to try (0:
// settle on k) and whether this run reached the target. A run that
// reaches the target settles k only when the run before it, of the same
// k, did too: the first run of a workload (a single episode, right after
// the team started or another workload ran) can take the whole target by
// itself, and settling there made every sample one episode long, timing
// the start of the episode along with it: measured, the first
// candidate then read 2.2 times its speed (central 433 ns against 153-206
// for its other instances) in about one run in four, the pick of a
// regret truth bench among them.
func calibrate(k int, el, target float64, reached bool) (next int, reach bool) {
	switch {
	case k >= 1<<24:
		return 0, true
	case el >= target && reached:
		return 0, true
	case el >= target:
		return k, true // time the same k again
	case el*4 < target:
		return 4 * k, false
	default:
		return 2 * k, false
	}
}

// roundOrders is the order the workloads run in, round by round: a
// shuffle that changes from one round to the next (the same for every
// run, so every rank computes it alike and a test can repeat it). A fixed
// order put every candidate at the same distance from the floor, last in
// each round; a shuffled one puts the floor next to each candidate in
// turn, so that a candidate's sample and its round's floor sample are
// taken close together on average, and no candidate always follows the
// same other (a blocking one whose threads just slept).
func roundOrders(rounds, works int) [][]int {
	rng := rand.New(rand.NewPCG(0x6172726965727475, 0x6e65)) // "barriertune"
	orders := make([][]int, max(rounds, 0))
	for r := range orders {
		orders[r] = rng.Perm(works)
	}
	return orders
}

// warmup is the untimed episodes run before a sample of k episodes.
func warmup(k int) int { return max(1, k/8) }

// drop marks workloads whose median is DropFactor times the best.
func drop(samples [][]float64, skip []bool, works []workload, opts Options) {
	if opts.DropFactor <= 0 {
		return
	}
	best := math.Inf(1)
	for i, s := range samples {
		if !skip[i] && !works[i].keep && len(s) >= opts.MinSamples {
			best = min(best, Median(s))
		}
	}
	for i, s := range samples {
		if !skip[i] && !works[i].keep && len(s) >= opts.MinSamples && Median(s) > opts.DropFactor*best {
			skip[i] = true
		}
	}
}

// Median returns the median of s (NaN when empty), leaving s unchanged.
func Median(s []float64) float64 {
	v := slices.Clone(s)
	slices.Sort(v)
	if len(v) == 0 {
		return math.NaN()
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// summarise computes a result's statistics from samples (see Stats).
func summarise(s []float64) Result {
	var r Result
	r.setStats(Summarize(s))
	return r
}

// controlPolicy is the waiting policy of the control barrier between a
// sample's workloads: spin when every thread has a CPU of its own, else
// park. It is explicit, never AutoPolicy or the environment's
// (BARRIERTUNE_WAIT_POLICY): AutoPolicy's bound starts from the block and
// wake-up cost of the results file barriers finds, and a check that is
// about to write that file must not measure through what it read there.
func controlPolicy(cpus cpuset.Placement) barriers.Policy {
	if osal.OversubscribedHere(cpus) {
		return barriers.Park
	}
	return barriers.Spin
}

// DefaultPolicy is the waiting policy the tuner uses for a placement: pure
// spin when every thread has a CPU of its own, else Auto, which parks at
// once and so never lets spinners starve the participant they wait for.
func DefaultPolicy(cpus cpuset.Placement) barriers.Policy {
	if osal.OversubscribedHere(cpus) {
		return barriers.AutoPolicy
	}
	return barriers.Spin
}
