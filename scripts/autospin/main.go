// Command autospin measures what AutoPolicy costs against Spin on pinned
// threads on a quiet machine (within 10%): each algorithm with
// both policies as candidates of one measure.Barriers run, so their samples
// interleave round by round, repeated; it prints the median of each run's
// auto/spin ratio and the range.
//
//	go run ./scripts/autospin -runs 15 -cpus 0,1
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/measure"
)

// options are the command line's flags.
type options struct {
	runs, samples int
	cpuList, algs string
	swap          bool
}

func main() {
	var o options
	flag.IntVar(&o.runs, "runs", 15, "measure.Barriers runs (each interleaves both policies)")
	flag.IntVar(&o.samples, "samples", 31, "samples per candidate per run")
	flag.StringVar(&o.cpuList, "cpus", "0,1", "CPU of each pinned thread, in rank order")
	flag.StringVar(&o.algs, "algorithms", "dissemination,pairwise,static-tree,central", "algorithms, comma-separated")
	flag.BoolVar(&o.swap, "swap", false, "construct the AutoPolicy instance first")
	flag.Parse()
	set, err := cpuset.ParseList(o.cpuList)
	if err != nil || set.Len() < 2 || o.runs < 1 || o.runs > 1000 || o.samples < 3 || o.samples > 10000 {
		fmt.Fprintf(os.Stderr, "autospin: want -cpus of two or more CPUs (got %q), -runs 1..1000, -samples 3..10000\n", o.cpuList)
		os.Exit(2)
	}
	cpus := set.Members()
	names := strings.Split(o.algs, ",")
	var cands []measure.Candidate
	for _, a := range names {
		if _, err := barriers.Lookup(a); err != nil {
			fmt.Fprintln(os.Stderr, "autospin:", err)
			os.Exit(2)
		}
		if o.swap {
			cands = append(cands, measure.Candidate{Algorithm: a, Policy: barriers.AutoPolicy}, measure.Candidate{Algorithm: a, Policy: barriers.Spin})
		} else {
			cands = append(cands, measure.Candidate{Algorithm: a, Policy: barriers.Spin}, measure.Candidate{Algorithm: a, Policy: barriers.AutoPolicy})
		}
	}
	ratios := make([][]float64, len(names))
	spins := make([][]float64, len(names))
	for r := 0; r < o.runs; r++ {
		run, err := measure.Barriers(cpus, cands, measure.Options{Samples: o.samples})
		if err != nil {
			fmt.Fprintln(os.Stderr, "autospin:", err)
			os.Exit(1)
		}
		for i := range names {
			s, a := run.Results[2*i], run.Results[2*i+1]
			if o.swap {
				s, a = a, s
			}
			s.Summarise()
			a.Summarise()
			ratios[i] = append(ratios[i], a.MedianNs/s.MedianNs)
			spins[i] = append(spins[i], s.MedianNs)
		}
	}
	fmt.Printf("pinned on CPUs %s, %d runs of %d interleaved samples per policy\n", set, o.runs, o.samples)
	fmt.Printf("%-15s %10s %12s %16s\n", "algorithm", "spin ns", "auto/spin", "range")
	for i, a := range names {
		r := slices.Clone(ratios[i])
		slices.Sort(r)
		fmt.Printf("%-15s %10.1f %11.3fx %7.3f-%.3fx\n", a, measure.Median(spins[i]), measure.Median(r), r[0], r[len(r)-1])
	}
}
