package main

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/cmd/internal/configsets"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/text"
)

// setsOptions are the flags of `barriertune sets`.
type setsOptions struct {
	global     *globalOptions
	src        sourceFlags
	method     string
	threads    int  // only this thread count, when threadsSet
	threadsSet bool // --threads was given
	limit      int
	count      bool
	json       bool
}

func newSetsCmd(g *globalOptions) *cobra.Command {
	opts := &setsOptions{global: g}
	cmd := &cobra.Command{
		Use:   "sets",
		Short: "List or count the placements of t threads (configuration sets)",
		Long: `List or count the configuration sets of a topology: the placements of t
threads on its PUs that its symmetry does not make equivalent.

--method exact (the default) treats two placements as one when an
automorphism of the CPU tree (types, cache sizes and CPU kinds kept) maps one
to the other. --method paper is Algorithm 1 of Sharma and Sussman, whose key
only looks at child counts up the ancestor chain: it merges, for instance,
"both threads in one package" with "one thread in each package".

When a thread count has more sets than --limit, a labelled choice of
representatives is listed instead (exact method): compact, scatter, the
balanced level-uniform placements and near-balanced fills. --count prints
the exact number of sets for every thread count, computed without listing
them, with 2^n and the paper method's totals for comparison.`,
		Example: `  barriertune sets --threads 2
  barriertune sets --synthetic "pack:2 core:4 pu:2" --count
  barriertune sets --topology cmd/internal/configsets/testdata/paper-example3.json --method paper
  barriertune sets --sysfs-root ./snapshot --threads 8 --limit 4 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.threadsSet = cmd.Flags().Changed("threads")
			return runSets(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	opts.src.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&opts.method, "method", "exact", "deduplication: exact (tree automorphisms) or paper (Algorithm 1's keys)")
	f.IntVarP(&opts.threads, "threads", "t", 0, "only this thread count (default: every count 0..PUs)")
	f.IntVar(&opts.limit, "limit", configsets.DefaultLimit, "most sets per thread count; above it, representatives (exact) or the first ones (paper)")
	f.BoolVar(&opts.count, "count", false, "print the number of sets for every thread count")
	f.BoolVar(&opts.json, "json", false, "print as JSON")
	registerCompletions(cmd, map[string][]string{"method": {"exact", "paper"}})
	return cmd
}

// runSets lists or counts the configuration sets.
func runSets(_ context.Context, opts *setsOptions, w, _ io.Writer) error {
	method, err := configsets.ParseMethod(opts.method)
	if err != nil {
		return usageErrorf("--method: %v", err)
	}
	if opts.limit < 1 || opts.limit > maxSetsLimit {
		return usageErrorf("--limit %d: want 1..%d sets per thread count", opts.limit, maxSetsLimit)
	}
	if opts.threadsSet && opts.threads < 1 {
		// One meaning of --threads 0 in every command: a usage error.
		return usageErrorf("--threads %d is out of range: want 1 or more threads (without --threads the listing starts at the empty placement, 0 threads)", opts.threads)
	}
	topo, err := opts.src.load()
	if err != nil {
		return err
	}
	n := len(topo.PUs())
	if opts.count {
		return printCounts(w, topo, method, opts.json)
	}
	lo, hi := 0, n
	if opts.threadsSet {
		if opts.threads > n {
			return usageErrorf("--threads %d is out of range: this topology has %s (want 1..%d)", opts.threads, text.Plural(n, "allowed PU"), n)
		}
		lo, hi = opts.threads, opts.threads
	}
	space := configsets.NewSpace(topo)
	var sets []configsets.Set
	for t := lo; t <= hi; t++ {
		got, err := space.List(t, method, opts.limit)
		if err != nil {
			return err
		}
		sets = append(sets, got...)
	}
	if opts.json {
		if sets == nil {
			sets = []configsets.Set{}
		}
		return writeJSON(w, struct {
			Method configsets.Method `json:"method"`
			Sets   []configsets.Set  `json:"sets"`
		}{method, sets})
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "threads\tcpus\tlabel\tconfig")
	clipped := false
	for _, s := range sets {
		cpus, c1 := text.Clip(cpuset.FormatList(s.CPUs), setsColumn)
		label, c2 := text.Clip(s.Label, setsColumn/2)
		config, c3 := text.Clip(s.Config, setsColumn)
		clipped = clipped || c1 || c2 || c3
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", s.Threads, cpus, label, config)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if clipped {
		fmt.Fprintln(w, "(long lists are shortened in the middle, \"…\"; --json gives them whole)")
	}
	counts, err := space.Counts()
	if method == configsets.Paper {
		counts, err = space.PaperCounts()
	}
	if err != nil {
		fmt.Fprintf(w, "%s listed (%s method, limit %d per thread count); %v\n", text.Plural(len(sets), "set"), method, opts.limit, err)
		return nil
	}
	total := new(big.Int)
	for t := lo; t <= hi; t++ {
		total.Add(total, counts[t])
	}
	fmt.Fprintf(w, "%s listed of %s (%s method, limit %d per thread count)\n", text.Plural(len(sets), "set"), total, method, opts.limit)
	return nil
}

func printCounts(w io.Writer, topo *hwtree.Topology, method configsets.Method, asJSON bool) error {
	n := len(topo.PUs())
	for _, m := range []configsets.Method{configsets.Exact, configsets.Paper} {
		if err := configsets.Countable(topo, m); err != nil {
			return err
		}
	}
	exact := configsets.Counts(topo)
	paper := configsets.PaperCounts(topo)
	counts := exact
	if method == configsets.Paper {
		counts = paper
	}
	if asJSON {
		strs := make([]string, len(counts))
		for i, c := range counts {
			strs[i] = c.String()
		}
		return writeJSON(w, struct {
			Method configsets.Method `json:"method"`
			PUs    int               `json:"pus"`
			Counts []string          `json:"counts"`
		}{method, n, strs})
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "threads\t%s sets\t\n", method)
	for t, c := range counts {
		fmt.Fprintf(tw, "%d\t%s\t\n", t, c)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	all := new(big.Int).Lsh(big.NewInt(1), uint(n))
	fmt.Fprintf(w, "total: %s %s sets for %s (2^%d = %s placements; paper method %s, exact %s)\n",
		configsets.Total(counts), method, text.Plural(n, "PU"), n, text.Big(all), configsets.Total(paper), configsets.Total(exact))
	return nil
}

// setsColumn is the widest a CPU list or config gets in the sets table,
// so that its lines stay under 160 characters.
const setsColumn = 56
