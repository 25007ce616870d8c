// Command autospin measures what AutoPolicy costs against Spin on pinned
// threads on a quiet machine (within 10%): each algorithm with
// both policies as candidates of one measure.Barriers run, so their samples
// interleave round by round, repeated; it prints the median of each run's
// auto/spin ratio and the range.
//
// Each candidate is timed as 8 separately allocated instances sharing its
// episodes (-instances): where one instance's flags land moves its episode
// by up to 10% either way on the EPYC guest, which one instance a policy
// gets would otherwise decide the ratio. -control times Spin against a
// second Spin, the spread that placement and noise alone give (one
// instance: 0.86-1.09x over 20 invocations; 8: 0.97-1.02x).
//
//	go run ./cmd/scripts/autospin -runs 15 -cpus 0,1
//	go run ./cmd/scripts/autospin -control
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/algname"
)

// options are the command line's flags.
type options struct {
	runs, samples, instances int
	cpuList, algs            string
	swap, control            bool
}

func main() {
	var o options
	flag.IntVar(&o.runs, "runs", 15, "measure.Barriers runs (each interleaves both policies)")
	flag.IntVar(&o.samples, "samples", 31, "samples per candidate per run")
	flag.StringVar(&o.cpuList, "cpus", "0,1", "CPU of each pinned thread, in rank order")
	flag.StringVar(&o.algs, "algorithms", strings.Join([]string{algname.Dissemination, algname.Pairwise, algname.StaticTree, algname.Central}, ","), "algorithms, comma-separated")
	flag.BoolVar(&o.swap, "swap", false, "construct the AutoPolicy instance first")
	flag.IntVar(&o.instances, "instances", 8, "barrier instances per candidate, episodes shared in turn (averages over where each instance's flags land)")
	flag.BoolVar(&o.control, "control", false, "A/A control: Spin against a second Spin instance, for the spread that placement and noise alone give")
	flag.Parse()
	set, err := cpuset.ParseList(o.cpuList)
	if err != nil || set.Len() < 2 || o.runs < 1 || o.runs > 1000 || o.samples < 3 || o.samples > 10000 || o.instances < 1 || o.instances > measure.MaxInstances {
		fmt.Fprintf(os.Stderr, "autospin: want -cpus of two or more CPUs (got %q), -runs 1..1000, -samples 3..10000, -instances 1..%d\n", o.cpuList, measure.MaxInstances)
		os.Exit(2)
	}
	cpus := set.Members()
	names := strings.Split(o.algs, ",")
	other := barriers.AutoPolicy
	if o.control {
		other = barriers.Spin
	}
	var cands []measure.Candidate
	for _, a := range names {
		if _, err := barriers.Lookup(a); err != nil {
			fmt.Fprintln(os.Stderr, "autospin:", err)
			os.Exit(2)
		}
		if o.swap {
			cands = append(cands, measure.Candidate{Algorithm: a, Policy: other}, measure.Candidate{Algorithm: a, Policy: barriers.Spin})
		} else {
			cands = append(cands, measure.Candidate{Algorithm: a, Policy: barriers.Spin}, measure.Candidate{Algorithm: a, Policy: other})
		}
	}
	ratios := make([][]float64, len(names))
	spins := make([][]float64, len(names))
	for r := 0; r < o.runs; r++ {
		run, err := measure.Barriers(cpus, cands, measure.Options{Samples: o.samples, Instances: o.instances})
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
	ratio := "auto/spin"
	if o.control {
		ratio = "spin/spin"
	}
	fmt.Printf("pinned on CPUs %s, %d runs of %d interleaved samples per policy, %d instances each\n", set, o.runs, o.samples, o.instances)
	fmt.Printf("%-15s %10s %12s %16s\n", "algorithm", "spin ns", ratio, "range")
	for i, a := range names {
		r := slices.Clone(ratios[i])
		slices.Sort(r)
		fmt.Printf("%-15s %10.1f %11.3fx %7.3f-%.3fx\n", a, measure.Median(spins[i]), measure.Median(r), r[0], r[len(r)-1])
	}
}
