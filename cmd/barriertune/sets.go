package main

import (
	"fmt"
	"math/big"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/configsets"
	"github.com/barriertune/barriertune/hwtree"
)

func newSetsCmd() *cobra.Command {
	var (
		src               sourceFlags
		methodName        string
		threads, limit    int
		countOnly, asJSON bool
	)
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
  barriertune sets --topology testdata/paper-example3.json --method paper
  barriertune sets --sysfs-root ./snapshot --threads 8 --limit 4 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			method, err := configsets.ParseMethod(methodName)
			if err != nil {
				return fmt.Errorf("--method: %w", err)
			}
			if limit < 1 {
				return fmt.Errorf("--limit %d: want at least 1", limit)
			}
			topo, err := src.load()
			if err != nil {
				return err
			}
			n := len(topo.PUs())
			w := cmd.OutOrStdout()
			if countOnly {
				return printCounts(w, topo, method, asJSON)
			}
			lo, hi := 0, n
			if cmd.Flags().Changed("threads") {
				if threads < 0 || threads > n {
					return fmt.Errorf("--threads %d is out of range: this topology has %d allowed PUs (want 0..%d)", threads, n, n)
				}
				lo, hi = threads, threads
			}
			space := configsets.NewSpace(topo)
			var sets []configsets.Set
			for t := lo; t <= hi; t++ {
				got, err := listSets(space, t, method, limit)
				if err != nil {
					return err
				}
				sets = append(sets, got...)
			}
			if asJSON {
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
			for _, s := range sets {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", s.Threads, joinInts(s.CPUs), s.Label, s.Config)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			counts := space.Counts()
			if method == configsets.Paper {
				counts = space.PaperCounts()
			}
			total := new(big.Int)
			for t := lo; t <= hi; t++ {
				total.Add(total, counts[t])
			}
			fmt.Fprintf(w, "%d sets listed of %s (%s method, limit %d per thread count)\n", len(sets), total, method, limit)
			return nil
		},
	}
	src.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&methodName, "method", "exact", "deduplication: exact (tree automorphisms) or paper (Algorithm 1's keys)")
	f.IntVarP(&threads, "threads", "t", 0, "only this thread count (default: every count 0..PUs)")
	f.IntVar(&limit, "limit", configsets.DefaultLimit, "most sets per thread count; above it, representatives (exact) or the first ones (paper)")
	f.BoolVar(&countOnly, "count", false, "print the number of sets for every thread count")
	f.BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// listSets returns the sets for t threads within limit.
func listSets(space *configsets.Space, t int, method configsets.Method, limit int) ([]configsets.Set, error) {
	if method == configsets.Exact {
		return space.Representatives(t, limit)
	}
	if c := space.PaperCounts()[t]; c.Cmp(big.NewInt(configsets.MaxEnumerate)) > 0 {
		return nil, fmt.Errorf("the paper method has %s sets for %d threads; too many to list, use --method exact for representatives", c, t)
	}
	seq, err := space.Enumerate(t, method)
	if err != nil {
		return nil, err
	}
	var out []configsets.Set
	for s := range seq {
		if len(out) == limit {
			break
		}
		out = append(out, s)
	}
	return out, nil
}

func printCounts(w interface{ Write([]byte) (int, error) }, topo *hwtree.Topology, method configsets.Method, asJSON bool) error {
	n := len(topo.PUs())
	counts := configsets.Counts(topo)
	paper := configsets.PaperCounts(topo)
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
	fmt.Fprintf(w, "total: %s %s sets for %d PUs (2^%d = %s placements; paper method %s, exact %s)\n",
		configsets.Total(counts), method, n, n, shorten(all), configsets.Total(paper), configsets.Total(configsets.Counts(topo)))
	return nil
}

// shorten writes very large numbers in scientific form.
func shorten(v *big.Int) string {
	s := v.String()
	if len(s) <= 24 {
		return s
	}
	return fmt.Sprintf("%s.%se%d", s[:1], strings.TrimRight(s[1:4], "0"), len(s)-1)
}
