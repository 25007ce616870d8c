// Command autospin measures what AutoPolicy costs against Spin on pinned
// threads on a quiet machine (issue 18: within 10%): each algorithm with
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

func main() {
	runs := flag.Int("runs", 15, "measure.Barriers runs (each interleaves both policies)")
	samples := flag.Int("samples", 31, "samples per candidate per run")
	cpuList := flag.String("cpus", "0,1", "CPU of each pinned thread, in rank order")
	algs := flag.String("algorithms", "dissemination,pairwise,static-tree,central", "algorithms, comma-separated")
	swap := flag.Bool("swap", false, "construct the AutoPolicy instance first")
	flag.Parse()
	set, err := cpuset.ParseList(*cpuList)
	if err != nil || set.Len() < 2 || *runs < 1 || *runs > 1000 || *samples < 3 || *samples > 10000 {
		fmt.Fprintf(os.Stderr, "autospin: want -cpus of two or more CPUs (got %q), -runs 1..1000, -samples 3..10000\n", *cpuList)
		os.Exit(2)
	}
	cpus := set.Members()
	names := strings.Split(*algs, ",")
	var cands []measure.Candidate
	for _, a := range names {
		if _, err := barriers.Lookup(a); err != nil {
			fmt.Fprintln(os.Stderr, "autospin:", err)
			os.Exit(2)
		}
		if *swap {
			cands = append(cands, measure.Candidate{Algorithm: a, Policy: barriers.AutoPolicy}, measure.Candidate{Algorithm: a, Policy: barriers.Spin})
		} else {
			cands = append(cands, measure.Candidate{Algorithm: a, Policy: barriers.Spin}, measure.Candidate{Algorithm: a, Policy: barriers.AutoPolicy})
		}
	}
	ratios := make([][]float64, len(names))
	spins := make([][]float64, len(names))
	for r := 0; r < *runs; r++ {
		run, err := measure.Barriers(cpus, cands, measure.Options{Samples: *samples})
		if err != nil {
			fmt.Fprintln(os.Stderr, "autospin:", err)
			os.Exit(1)
		}
		for i := range names {
			s, a := run.Results[2*i], run.Results[2*i+1]
			if *swap {
				s, a = a, s
			}
			s.Summarise()
			a.Summarise()
			ratios[i] = append(ratios[i], a.MedianNs/s.MedianNs)
			spins[i] = append(spins[i], s.MedianNs)
		}
	}
	fmt.Printf("pinned on CPUs %s, %d runs of %d interleaved samples per policy\n", set, *runs, *samples)
	fmt.Printf("%-15s %10s %12s %16s\n", "algorithm", "spin ns", "auto/spin", "range")
	for i, a := range names {
		r := slices.Clone(ratios[i])
		slices.Sort(r)
		fmt.Printf("%-15s %10.1f %11.3fx %7.3f-%.3fx\n", a, measure.Median(spins[i]), measure.Median(r), r[0], r[len(r)-1])
	}
}
