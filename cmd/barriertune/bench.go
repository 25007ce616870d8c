package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/measure"
	"github.com/barriertune/barriertune/osal"
)

func newBenchCmd() *cobra.Command {
	var (
		algorithm, cpuList, policyName string
		skew, plotPath                 string
		threads, samples               int
		sampleTime                     time.Duration
		pingpong, asJSON               bool
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Time barrier algorithms, or the core-to-core ping-pong floor",
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

With --pingpong, bench instead measures the one-way core-to-core latency
between two CPUs (half the round trip of one cache line): the floor that no
barrier between them can beat. A barrier run on two or more CPUs also
measures the floor between its first two CPUs, interleaved with the
algorithms in the same run, and shows each algorithm's ratio to it.

The default policy is the one the install-time check uses: pure spin when
every thread has a CPU of its own, else auto (park at once).`,
		Example: `  barriertune bench                          # all algorithms, all allowed CPUs
  barriertune bench --algorithm mcs --threads 8 --policy park
  barriertune bench --threads 2 --cpus 0,1 --json
  barriertune bench --pingpong --cpus 0,1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			allowed, err := osal.Allowed()
			if err != nil {
				return err
			}
			cpus, err := parsePlacement(cpuList)
			if err != nil {
				return err
			}
			opts := measure.Options{Samples: samples, SampleTarget: sampleTime, Context: cmd.Context()}
			w := cmd.OutOrStdout()
			if pingpong {
				if len(cpus) != 2 {
					return fmt.Errorf("--pingpong needs --cpus A,B (two CPUs), got %q", cpuList)
				}
				pp, err := measure.PingPongLatency(cpus[0], cpus[1], opts)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(w, map[string]any{"pingpong": pp})
				}
				fmt.Fprintf(w, "one-way latency CPU %d <-> CPU %d: median %.1f ns (min %.1f, max %.1f, %d samples)\n",
					pp.CPUs[0], pp.CPUs[1], pp.MedianNs, pp.MinNs, pp.MaxNs, pp.Reps)
				return nil
			}
			switch {
			case len(cpus) == 0 && threads == 0:
				threads = allowed.Len()
			case len(cpus) == 0 && threads < 1:
				return fmt.Errorf("--threads %d: want at least 1", threads)
			case len(cpus) > 0 && threads == 0:
				threads = len(cpus)
			case len(cpus) > 0 && threads != len(cpus):
				return fmt.Errorf("--threads %d but --cpus lists %d CPUs; give one CPU per thread", threads, len(cpus))
			}
			if len(cpus) == 0 {
				cpus = osal.RoundRobin(threads, allowed)
			}
			policy, err := barriers.ParsePolicy(policyName)
			if err != nil {
				return fmt.Errorf("--policy: %w", err)
			}
			if !cmd.Flags().Changed("policy") {
				policy = measure.DefaultPolicy(cpus)
			}
			names := barriers.Names()
			if algorithm != "all" {
				if _, err := barriers.Lookup(algorithm); err != nil {
					return fmt.Errorf("--algorithm: %w (or all)", err)
				}
				names = []string{algorithm}
			}
			if policy == barriers.Spin && measure.Oversubscribed(cpus) {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: pure spinning with %d threads on %d CPUs can cost milliseconds per episode\n", len(cpus), len(distinct(cpus)))
			}
			var cands []measure.Candidate
			for _, n := range names {
				cands = append(cands, measure.Candidate{Algorithm: n, Policy: policy})
			}
			if skew != "" {
				return runSkew(w, cpus, cands, skew, opts, asJSON)
			}
			opts.Floor = true
			run, err := measure.Barriers(cpus, cands, opts)
			if err != nil {
				return err
			}
			if plotPath != "" {
				if err := writeBenchPlot(plotPath, run.Results, run.Floor); err != nil {
					return err
				}
			}
			results, floor := run.Results, run.Floor
			if asJSON {
				out := map[string]any{"results": results}
				if floor != nil {
					out["pingpong"] = floor
				}
				return writeJSON(w, out)
			}
			return printBench(w, results, floor)
		},
	}
	f := cmd.Flags()
	f.StringVar(&algorithm, "algorithm", "all", "algorithm to time: "+strings.Join(barriers.Names(), ", ")+", or all")
	f.IntVarP(&threads, "threads", "t", 0, "number of threads (default: one per allowed CPU)")
	f.StringVar(&cpuList, "cpus", "", "CPU of each thread in rank order, e.g. 0,1 or 0-3 (repeats allowed)")
	f.StringVar(&policyName, "policy", "auto", "waiting policy: auto, spin, yield or park (default: spin when the threads fit the CPUs, else auto)")
	f.IntVar(&samples, "samples", 0, "samples per algorithm (default 21)")
	f.DurationVar(&sampleTime, "sample-time", 0, "target duration of one sample (default 200µs)")
	f.BoolVar(&pingpong, "pingpong", false, "measure the one-way core-to-core latency between --cpus A,B")
	f.BoolVar(&asJSON, "json", false, "print as JSON")
	f.StringVar(&skew, "skew", "", "make the last thread arrive late by these delays (ns or durations, e.g. 500,2us) and report synchronisation time against skew")
	f.StringVar(&plotPath, "plot", "", "also plot the run to `FILE`.svg or .png")
	return cmd
}

func printBench(w interface{ Write([]byte) (int, error) }, results []measure.Result, floor *measure.PingPong) error {
	sorted := slices.Clone(results)
	slices.SortStableFunc(sorted, func(a, b measure.Result) int {
		switch {
		case a.MedianNs < b.MedianNs:
			return -1
		case a.MedianNs > b.MedianNs:
			return 1
		}
		return 0
	})
	r0 := sorted[0]
	mode := "pinned locked threads"
	if !r0.Pinned {
		mode = "plain goroutines (threads outnumber CPUs)"
	}
	fmt.Fprintf(w, "%d threads on CPUs %s, %s\n", r0.Threads, joinInts(r0.CPUs), mode)
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
		line := fmt.Sprintf("%s\t%s\t%.1f\t%.1f-%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%d\t", r.Algorithm, r.Policy, r.MedianNs, r.CILowNs, r.CIHighNs, r.MinNs, r.MaxNs, r.MeanNs, r.StddevNs, r.Outliers, r.Reps)
		if floor != nil {
			line += fmt.Sprintf("%.2f\t", r.MedianNs/floor.MedianNs)
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// parsePlacement reads "0,1,0,1" or "0-3,8": CPUs in rank order, repeats
// allowed.
func parsePlacement(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("--cpus %q: %q is not a CPU number (want a list such as 0,1 or 0-3)", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("--cpus %q: %q is not a range of CPUs (want such as 0-3)", s, part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

func distinct(cpus []int) []int {
	var out []int
	for _, c := range cpus {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
