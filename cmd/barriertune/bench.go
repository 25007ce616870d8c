package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/figure"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cmd/internal/outfile"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/internal/text"
)

// benchOptions are the flags of `barriertune bench`.
type benchOptions struct {
	global        *globalOptions
	algorithms    []string // names, or "all"
	cpus          string
	oversubscribe bool
	policy        string
	policySet     bool // --policy was given
	threads       int
	threadsSet    bool // --threads was given
	samples       int
	instances     int
	sampleTime    time.Duration
	pingpong      bool
	json          bool
	skew          string // --skew delays, parsed by parseSkews
	plot          string // --plot FILE.svg|.png
}

func newBenchCmd(g *globalOptions) *cobra.Command {
	opts := &benchOptions{global: g}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Time barrier algorithms, or the core-to-core floor",
		Long: `Time barrier algorithms on pinned, locked OS threads and report
nanoseconds per episode as EPCC syncbench does: median with its 95%
confidence interval, min, max, and mean and standard deviation without the
outliers (samples beyond 3 interquartile ranges from the quartiles).

With --skew, the last thread arrives late by each given delay and bench
reports the synchronisation time (episode time minus the delay) against
the delay: which algorithms absorb imbalance. --plot FILE also draws the
run.

Without --cpus, threads go round-robin over the allowed CPUs. When threads
outnumber the CPUs (or GOMAXPROCS) they run as plain goroutines, which the
Go scheduler switches in user space; pure spinning is then a poor choice.
--cpus gives each thread's CPU in rank order; a CPU listed twice is refused
unless --oversubscribe allows it.

With --pingpong, bench instead measures the floor between two CPUs (--cpus
A,B; default: the first two allowed CPUs): the
episode of a two-thread spinning dissemination barrier there, one flag
signal each way with the barriers' own flag code (each round the fastest of
three instances). A barrier between those CPUs needs at least one signal
each way per episode, so none beats the floor except by noise: the fastest
two-thread barriers read about 1.0 times it. A barrier run on two or more
CPUs also measures the floor between its first two CPUs, interleaved with
the algorithms in the same run, and shows each algorithm's ratio to it.

The default policy is the one the install-time check uses: pure spin when
every thread has a CPU of its own, else auto (spin about twice the block and
wake-up cost, then block). The blocking baselines cond and channel block
whatever the policy; their rows say "blocks".

Ctrl-C (SIGINT) or SIGTERM stops the measurement; what was measured so far
is printed and the exit code is 130 or 143.`,
		Example: `  barriertune bench                          # all algorithms, all allowed CPUs
  barriertune bench --algorithm mcs --threads 8 --policy park
  barriertune bench --algorithm mcs,dissemination --threads 2 --cpus 0,1 --json
  barriertune bench --threads 4 --cpus 0,1,0,1 --oversubscribe
  barriertune bench --pingpong --cpus 0,1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.policySet = cmd.Flags().Changed("policy")
			opts.threadsSet = cmd.Flags().Changed("threads")
			return runBench(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&opts.algorithms, "algorithm", []string{"all"}, "algorithms to time, comma-separated: "+strings.Join(catalog.Names(), ", ")+", or all")
	f.IntVarP(&opts.threads, "threads", "t", 0, "number of threads, 1.."+strconv.Itoa(barriers.MaxParticipants)+" (default: one per allowed CPU, or one per --cpus entry)")
	f.StringVar(&opts.cpus, "cpus", "", "CPU of each thread in rank order, e.g. 0,1 or 0-3")
	f.BoolVar(&opts.oversubscribe, "oversubscribe", false, "allow --cpus to list a CPU more than once")
	f.StringVar(&opts.policy, "policy", "", "waiting policy: auto, spin, yield or park (default: spin when the threads fit the CPUs, else auto)")
	f.IntVar(&opts.samples, "samples", 21, "samples per algorithm")
	f.IntVar(&opts.instances, "instances", 1, "time each algorithm as this many separately allocated barriers, each sample their average (1.."+strconv.Itoa(measure.MaxInstances)+"; the check uses 3)")
	f.DurationVar(&opts.sampleTime, "sample-time", 200*time.Microsecond, "target duration of one sample")
	f.BoolVar(&opts.pingpong, "pingpong", false, "measure the floor (one flag signal each way) between --cpus A,B (default: the first two allowed CPUs)")
	f.BoolVar(&opts.json, "json", false, "print as JSON")
	f.StringVar(&opts.skew, "skew", "", "make the last thread arrive late by these delays (ns or durations, e.g. 500,2us) and report synchronisation time against skew")
	f.StringVar(&opts.plot, "plot", "", "also plot the run to `FILE`.svg or .png")
	_ = cmd.MarkFlagFilename("plot", "svg", "png")
	registerCompletions(cmd, map[string][]string{
		"algorithm": append(catalog.Names(), "all"),
		"policy":    policyNames(),
	})
	return cmd
}

// policyNames are the values --policy accepts.
func policyNames() []string { return []string{"auto", "spin", "yield", "park"} }

// validate checks the flag values before anything is measured.
func (o *benchOptions) validate() error {
	switch {
	case o.samples < 1:
		return usageErrorf("--samples %d: want at least 1 sample", o.samples)
	case o.samples > maxSamples:
		return usageErrorf("--samples %d: want at most %d samples", o.samples, maxSamples)
	case o.instances < 1 || o.instances > measure.MaxInstances:
		return usageErrorf("--instances %d: want 1..%d barriers per algorithm", o.instances, measure.MaxInstances)
	case o.sampleTime <= 0:
		return usageErrorf("--sample-time %s: want a positive duration such as 200us", o.sampleTime)
	case o.sampleTime > maxSampleTime:
		return usageErrorf("--sample-time %s: want at most %s", o.sampleTime, maxSampleTime)
	case o.threadsSet && (o.threads < 1 || o.threads > barriers.MaxParticipants):
		return usageErrorf("--threads %d: want 1..%d threads", o.threads, barriers.MaxParticipants)
	case o.plot != "" && figure.Format(o.plot) != nil:
		return usageErrorf("--plot: %v", figure.Format(o.plot))
	}
	if o.skew != "" {
		if _, err := parseSkews(o.skew); err != nil {
			return usageError(err)
		}
	}
	return nil
}

// Caps on measurement flags, so that a typo cannot start a run of hours.
const (
	maxSamples    = 100_000
	maxSampleTime = 10 * time.Second
)

// runBench times the algorithms, or the ping-pong floor.
func runBench(ctx context.Context, opts *benchOptions, w, stderr io.Writer) error {
	if err := opts.validate(); err != nil {
		return err
	}
	if opts.plot != "" { // before measuring; the plot's writer checks again
		if err := outfile.Check("--plot", opts.plot); err != nil {
			return err
		}
	}
	list, err := parseCPUs("--cpus", opts.cpus, opts.oversubscribe || opts.pingpong, "--oversubscribe")
	if err != nil {
		return err
	}
	cpus := cpuset.Placement(list)
	ctx, stop := notifySignals(ctx)
	defer stop()
	mopts := measure.Options{Samples: opts.samples, SampleTarget: opts.sampleTime, Context: ctx, Instances: opts.instances}
	if opts.pingpong {
		return benchPingPong(ctx, cpus, opts, mopts, w, stderr)
	}
	policy := barriers.AutoPolicy
	if opts.policySet {
		if policy, err = barriers.ParsePolicy(opts.policy); err != nil {
			return usageErrorf("--policy: %v", err)
		}
	}
	names, err := algorithmNames("--algorithm", opts.algorithms)
	if err != nil {
		return err
	}
	if cpus, err = benchPlacement(opts, cpus); err != nil {
		return err
	}
	if !opts.policySet {
		policy = measure.DefaultPolicy(cpus)
	}
	if policy == barriers.Spin && osal.OversubscribedHere(cpus) && !opts.global.quiet {
		fmt.Fprintf(stderr, "warning: pure spinning with %s on %s can cost milliseconds per episode\n", text.Plural(len(cpus), "thread"), text.Plural(len(cpus.CPUs()), "CPU"))
	}
	var cands []measure.Candidate
	for _, n := range names {
		cands = append(cands, measure.Candidate{Algorithm: n, Policy: policy})
	}
	if opts.skew != "" {
		err := benchSkews(w, cpus, cands, opts.skew, mopts, opts.json, opts.plot)
		if err == nil && opts.plot != "" && !opts.global.quiet {
			fmt.Fprintf(stderr, "plot written to %s\n", opts.plot)
		}
		return err
	}
	mopts.Floor = true
	opts.global.verbosef(stderr, "bench: %s on %s, policy %s, algorithms %s, %s of %s each",
		text.Plural(len(cpus), "thread"), onCPUs(cpus), policy, strings.Join(names, ","), text.Plural(opts.samples, "sample"), opts.sampleTime)
	prog := startProgress(stderr, opts.global, "bench", fmt.Sprintf("%s, %s, %s each",
		text.Plural(len(names), "algorithm"), text.Plural(len(cpus), "thread"), text.Plural(opts.samples, "sample")))
	run, err := measure.Barriers(cpus, cands, mopts)
	prog.Stop()
	if err != nil {
		if se := interruption(ctx); se != nil {
			return se
		}
		return err
	}
	results, floor := run.Results, run.Floor
	if len(results) == 0 {
		return errors.New("bench measured nothing")
	}
	if opts.plot != "" {
		if err := writeBenchPlot(opts.plot, results, floor); err != nil {
			return err
		}
		if !opts.global.quiet {
			fmt.Fprintf(stderr, "plot written to %s\n", opts.plot)
		}
	}
	if opts.json {
		out := map[string]any{"results": benchJSONResults(results)}
		if floor != nil {
			out["pingpong"] = floor
		}
		err = writeJSON(w, out)
	} else {
		err = printBench(w, results, floor)
	}
	if err != nil {
		return err
	}
	// A signal that came after the last sample cut nothing.
	if se := interruption(ctx); se != nil && slices.ContainsFunc(results, func(r measure.Result) bool { return r.Reps < opts.samples }) {
		return &exitError{code: signalCode(se.sig), err: fmt.Errorf("%v: the figures above are from the samples taken before it", se)}
	}
	return nil
}

// benchPlacement is the CPU of each thread: --cpus as given (each allowed
// for this process), else --threads round-robin over the allowed CPUs.
func benchPlacement(opts *benchOptions, cpus cpuset.Placement) (cpuset.Placement, error) {
	allowed, err := osal.Allowed()
	if err != nil {
		return nil, err
	}
	if len(cpus) > 0 && opts.threadsSet && opts.threads != len(cpus) {
		return nil, usageErrorf("--threads %d but --cpus lists %s; give one CPU per thread", opts.threads, text.Plural(len(cpus), "CPU"))
	}
	for _, c := range cpus {
		if !allowed.Has(c) {
			return nil, usageErrorf("--cpus %q: CPU %d is not allowed for this process (allowed: %s)", elided(opts.cpus), c, allowed)
		}
	}
	if len(cpus) == 0 {
		threads := allowed.Len()
		if opts.threadsSet {
			threads = opts.threads
		}
		cpus = osal.RoundRobin(threads, allowed)
	}
	return cpus, nil
}

// benchPingPong measures the one-way latency between two CPUs.
func benchPingPong(ctx context.Context, cpus []int, opts *benchOptions, mopts measure.Options, w, stderr io.Writer) error {
	allowed, err := osal.Allowed()
	if err != nil {
		return err
	}
	if len(cpus) == 0 { // the first two allowed CPUs
		if allowed.Len() < 2 {
			return usageErrorf("--pingpong needs two CPUs, but this process is allowed only CPU %s", allowed)
		}
		cpus = allowed.Members()[:2]
	}
	if len(cpus) != 2 {
		return usageErrorf("--pingpong needs --cpus A,B (two CPUs), got %q", elided(opts.cpus))
	}
	if cpus[0] == cpus[1] {
		return usageErrorf("--pingpong needs two different CPUs, got CPU %d twice", cpus[0])
	}
	for _, c := range cpus {
		if !allowed.Has(c) {
			return usageErrorf("--cpus %q: CPU %d is not allowed for this process (allowed: %s)", elided(opts.cpus), c, allowed)
		}
	}
	prog := startProgress(stderr, opts.global, "bench", fmt.Sprintf("ping-pong CPU %d <-> CPU %d, %s", cpus[0], cpus[1], text.Plural(opts.samples, "sample")))
	pp, err := measure.PingPongLatency(cpus[0], cpus[1], mopts)
	prog.Stop()
	if se := interruption(ctx); se != nil {
		return se
	}
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(w, map[string]any{"pingpong": pp})
	}
	_, err = fmt.Fprintf(w, "one-way latency CPU %d <-> CPU %d: median %.1f ns (min %.1f, max %.1f, %s)\n",
		pp.CPUs[0], pp.CPUs[1], pp.MedianNs, pp.MinNs, pp.MaxNs, text.Plural(pp.Reps, "sample"))
	return err
}

// byMedian returns rs sorted by median, fastest first (stable).
func byMedian(rs []measure.Result) []measure.Result {
	sorted := slices.Clone(rs)
	slices.SortStableFunc(sorted, func(a, b measure.Result) int { return cmp.Compare(a.MedianNs, b.MedianNs) })
	return sorted
}

func printBench(w io.Writer, results []measure.Result, floor *measure.PingPong) error {
	sorted := byMedian(results)
	r0 := sorted[0]
	if r0.Pinned {
		fmt.Fprintf(w, "%s pinned, locked to %s in rank order\n", text.Plural(r0.Threads, "thread"), onCPUs(r0.CPUs))
	} else {
		fmt.Fprintf(w, "not pinned: %s\n", unpinnedReason(r0.CPUs))
	}
	if floor != nil {
		fmt.Fprintf(w, "floor: one-way latency CPU %d <-> CPU %d, median %.1f ns\n", floor.CPUs[0], floor.CPUs[1], floor.MedianNs)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "algorithm\tpolicy\tmedian ns\t95% CI\tmin ns\tmax ns\tmean ns\tstddev\toutliers\treps\t"
	if floor != nil {
		header += "x floor\t"
	}
	fmt.Fprintln(tw, header)
	for _, r := range sorted {
		line := fmt.Sprintf("%s\t%s\t%.1f\t%.1f-%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%d\t", r.Algorithm, policyLabel(r), r.MedianNs, r.CILowNs, r.CIHighNs, r.MinNs, r.MaxNs, r.MeanNs, r.StddevNs, r.Outliers, r.Reps)
		if floor != nil {
			line += fmt.Sprintf("%.2f\t", r.MedianNs/floor.MedianNs)
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// benchResult is one result as bench --json writes it: the CPUs are where
// the threads ran only when they were pinned; unpinned goroutines went
// wherever the Go scheduler put them, so the CPUs asked for are given
// apart, with the reason.
type benchResult struct {
	measure.Result
	CPUs          []int  `json:"cpus"` // null when not pinned
	RequestedCPUs []int  `json:"requested_cpus,omitempty"`
	Unpinned      string `json:"unpinned,omitempty"`
}

func benchJSONResults(rs []measure.Result) []benchResult {
	out := make([]benchResult, len(rs))
	for i, r := range rs {
		out[i] = benchResult{Result: r, CPUs: r.CPUs}
		out[i].Policy = policyLabel(r)
		if !r.Pinned {
			out[i].CPUs, out[i].RequestedCPUs, out[i].Unpinned = nil, r.CPUs, unpinnedReason(r.CPUs)
		}
	}
	return out
}

// unpinnedReason says why threads on cpus ran as goroutines.
func unpinnedReason(cpus cpuset.Placement) string {
	d := cpus.CPUs()
	if len(cpus) > len(d) {
		return fmt.Sprintf("%s on %s (%s), run as plain goroutines where the Go scheduler put them",
			text.Plural(len(cpus), "thread"), text.Plural(len(d), "CPU"), cpuset.FormatList(slices.Sorted(slices.Values(d))))
	}
	return fmt.Sprintf("%s but GOMAXPROCS is %d, run as plain goroutines where the Go scheduler put them (CPUs %s)",
		text.Plural(len(cpus), "thread"), runtime.GOMAXPROCS(0), cpuset.FormatList(slices.Sorted(slices.Values(d))))
}

// policyLabel is a result's waiting policy as bench prints it: "blocks"
// for the blocking baselines (cond, channel), which ignore the policy.
func policyLabel(r measure.Result) string {
	if a, err := barriers.Lookup(r.Algorithm); err == nil && !a.Spins {
		return "blocks"
	}
	return r.Policy
}
